/* A good plugin that declines every graph but does not export the optional
 * hipdnnEnginePluginGetNotApplicableReason: the backend must fill in its default,
 * "declined, no reason given" (docs/architecture.md, "Loading plugins"). */
#define TP_PLUGIN_NAME "no_reason"
#define TP_ENGINE_NAME "no_reason"
#include "test_plugin_common.h"
