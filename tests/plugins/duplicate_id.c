/* A valid plugin whose engine is also named "declines_all", so its id is already owned by
 * libdeclines_all.so (loaded first: files load in sorted name order).  The loader must drop
 * this engine with "engine id clash with <other plugin path>" (docs/architecture.md,
 * "Loading plugins"). */
#define TP_PLUGIN_NAME "duplicate_id"
#define TP_ENGINE_NAME "declines_all"
#define TP_REASON "duplicate_id: must never be asked"
#include "test_plugin_common.h"
