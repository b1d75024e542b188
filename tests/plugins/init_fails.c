/* hipdnnEnginePluginCreate fails as a plugin does on a machine without its device: the
 * loader must skip it and log the plugin's own message (docs/architecture.md,
 * "Loading plugins"). */
#define TP_PLUGIN_NAME "init_fails"
#define TP_ENGINE_NAME "init_fails"
#define TP_CREATE_FAILS "init_fails: no device found"
#define TP_REASON "init_fails: never asked"
#include "test_plugin_common.h"
