/* Lacks the required hipdnnEnginePluginExecuteOpGraph: the loader must skip it with
 * "missing symbol hipdnnEnginePluginExecuteOpGraph" (docs/architecture.md, "Loading plugins"). */
#define TP_PLUGIN_NAME "missing_symbol"
#define TP_ENGINE_NAME "missing_symbol"
#define TP_OMIT_EXECUTE 1
#define TP_REASON "missing_symbol: never loaded"
#include "test_plugin_common.h"
