/* A good plugin whose one engine declines every graph and says why: the backend must list
 * it among the loaded engines and report its reason (docs/architecture.md, "Loading plugins"). */
#define TP_PLUGIN_NAME "declines_all"
#define TP_ENGINE_NAME "declines_all"
#define TP_REASON "declines_all: this test engine declines every graph"
#include "test_plugin_common.h"
