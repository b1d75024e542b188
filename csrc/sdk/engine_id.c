/* Engine ids: the 64-bit FNV-1a hash of the engine name, so ids are stable across
 * builds and clashes are detectable by the loader. */
#include "hipdnn/hipdnn_sdk.h"

uint64_t hipdnnSdkFnv1a64(const char* s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; ++s) {
        h ^= (uint8_t)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}
