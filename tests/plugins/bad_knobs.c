/* Engine "bad_knobs" offers a knob whose default lies outside its range: the loader must
 * drop the engine, since no config could then be checked against the knob
 * (docs/architecture.md, "Loading plugins"). */
#define TP_PLUGIN_NAME "bad_knobs"
#define TP_ENGINE_NAME "bad_knobs"
#define TP_REASON "bad_knobs: must never be asked"
#define TP_KNOBS {{9, "split", 0, 4, 5}}
#include "test_plugin_common.h"
