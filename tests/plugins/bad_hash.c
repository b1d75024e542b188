/* Engine "bad_hash" reports an id that is not the FNV-1a 64 hash of its name: the loader
 * must drop the engine (docs/architecture.md, "Loading plugins"). */
#define TP_PLUGIN_NAME "bad_hash"
#define TP_ENGINE_NAME "bad_hash"
#define TP_ENGINE_ID (hipdnnSdkFnv1a64(TP_ENGINE_NAME) ^ 0x5a5a5a5aull)
#define TP_REASON "bad_hash: must never be asked"
#include "test_plugin_common.h"
