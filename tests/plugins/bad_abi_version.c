/* Claims plugin API 2.0: the loader must read the version first and skip the plugin
 * ("API 2.0 but host speaks 1.x") without touching anything else (docs/architecture.md,
 * "Loading plugins"). */
#define TP_PLUGIN_NAME "bad_abi_version"
#define TP_ENGINE_NAME "bad_abi_version"
#define TP_API_MAJOR 2
#define TP_API_MINOR 0
#define TP_REASON "bad_abi_version: never loaded"
#include "test_plugin_common.h"
