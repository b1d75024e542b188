// The one C++ file: FlatBuffers encode/decode of graphs and engine configs behind the
// plain-C model of hipdnn_sdk.h.  Decoding always runs the FlatBuffers verifier first,
// then checks what the verifier cannot (vector lengths against HIPDNN_MAX_*).
#include <cstdlib>
#include <cstring>
#include <new>

#include "engine_generated.h"
#include "graph_generated.h"
#include "hipdnn/hipdnn_sdk.h"

namespace fb = hipdnn::fb;

namespace {

char* dup_string(const flatbuffers::String* s) {
    const char* src = s ? s->c_str() : "";
    size_t n = s ? s->size() : 0;
    char* out = static_cast<char*>(std::malloc(n + 1));
    if (out) {
        std::memcpy(out, src, n);
        out[n] = '\0';
    }
    return out;
}

// Copies a [long] vector of at most `max` entries; false if longer.
bool copy_longs(const flatbuffers::Vector<int64_t>* v, int64_t* out, int32_t max,
                int32_t* n) {
    int32_t count = v ? static_cast<int32_t>(v->size()) : 0;
    if (v && v->size() > static_cast<uint32_t>(max)) return false;
    for (int32_t i = 0; i < count; ++i) out[i] = v->Get(i);
    if (n) *n = count;
    return true;
}

int finish(flatbuffers::FlatBufferBuilder& b, uint8_t** data, size_t* size) {
    *size = b.GetSize();
    *data = static_cast<uint8_t*>(std::malloc(*size ? *size : 1));
    if (!*data) return -1;
    std::memcpy(*data, b.GetBufferPointer(), *size);
    return 0;
}

}  // namespace

extern "C" int hipdnnSdkGraphEncode(const hipdnnSdkGraph* g, uint8_t** data, size_t* size) {
    try {
        flatbuffers::FlatBufferBuilder b(1024);
        std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
        for (int32_t i = 0; i < g->num_tensors; ++i) {
            const hipdnnSdkTensor& t = g->tensors[i];
            auto name = b.CreateString(t.name ? t.name : "");
            auto dims = b.CreateVector(t.dims, static_cast<size_t>(t.ndim));
            auto strides = b.CreateVector(t.strides, static_cast<size_t>(t.ndim));
            size_t vsize = t.is_by_value ? hipdnnSdkDataTypeSize(t.data_type) : 0;
            auto value = b.CreateVector(t.value, vsize);
            tensors.push_back(fb::CreateTensor(b, t.uid, name, t.data_type, dims, strides,
                                               t.is_virtual, t.is_by_value, value));
        }
        std::vector<flatbuffers::Offset<fb::Node>> nodes;
        for (int32_t i = 0; i < g->num_nodes; ++i) {
            const hipdnnSdkNode& n = g->nodes[i];
            const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n.kind);
            size_t nin = info ? static_cast<size_t>(info->num_inputs) : 0;
            size_t nout = info ? static_cast<size_t>(info->num_outputs) : 0;
            size_t ns = static_cast<size_t>(n.num_spatial);
            auto name = b.CreateString(n.name ? n.name : "");
            auto inputs = b.CreateVector(n.inputs, nin);
            auto outputs = b.CreateVector(n.outputs, nout);
            auto pre = b.CreateVector(n.pre_padding, ns);
            auto post = b.CreateVector(n.post_padding, ns);
            auto stride = b.CreateVector(n.stride, ns);
            auto dil = b.CreateVector(n.dilation, ns);
            nodes.push_back(fb::CreateNode(b, n.kind, name, n.compute_type, inputs, outputs,
                                           n.mode, n.conv_mode, pre, post, stride, dil,
                                           n.lower_clip, n.upper_clip, n.lower_clip_slope));
        }
        auto name = b.CreateString(g->name ? g->name : "");
        auto tv = b.CreateVector(tensors);
        auto nv = b.CreateVector(nodes);
        b.Finish(fb::CreateGraph(b, name, tv, nv), fb::GraphIdentifier());
        return finish(b, data, size);
    } catch (const std::bad_alloc&) {
        return -1;
    }
}

extern "C" hipdnnSdkGraph* hipdnnSdkGraphDecode(const uint8_t* data, size_t size, char* err,
                                                size_t err_len) {
    if (!data || size == 0) {
        hipdnnSdkFormat(err, err_len, "graph bytes: empty buffer");
        return nullptr;
    }
    flatbuffers::Verifier verifier(data, size);
    if (!fb::VerifyGraphBuffer(verifier)) {
        hipdnnSdkFormat(err, err_len,
                        "graph bytes: %zu bytes fail FlatBuffers verification (truncated, "
                        "corrupted or not a hipdnn graph)",
                        size);
        return nullptr;
    }
    const fb::Graph* fg = fb::GetGraph(data);
    auto* g = static_cast<hipdnnSdkGraph*>(std::calloc(1, sizeof(hipdnnSdkGraph)));
    if (!g) goto oom;
    g->name = dup_string(fg->name());
    if (!g->name) goto oom;
    if (fg->tensors() && fg->tensors()->size() > 0) {
        uint32_t n = fg->tensors()->size();
        g->tensors = static_cast<hipdnnSdkTensor*>(std::calloc(n, sizeof(hipdnnSdkTensor)));
        if (!g->tensors) goto oom;
        for (uint32_t i = 0; i < n; ++i) {
            const fb::Tensor* ft = fg->tensors()->Get(i);
            hipdnnSdkTensor& t = g->tensors[i];
            t.name = dup_string(ft->name());
            g->num_tensors = static_cast<int32_t>(i + 1);
            if (!t.name) goto oom;
            t.uid = ft->uid();
            t.data_type = static_cast<hipdnnDataType_t>(ft->data_type());
            int32_t nd = 0, ns = 0;
            if (!copy_longs(ft->dims(), t.dims, HIPDNN_MAX_DIMS, &nd) ||
                !copy_longs(ft->strides(), t.strides, HIPDNN_MAX_DIMS, &ns) || nd != ns) {
                hipdnnSdkFormat(err, err_len,
                                "graph bytes: tensor uid %lld has bad dims/strides (rank over "
                                "%d or lengths differ)",
                                static_cast<long long>(t.uid), HIPDNN_MAX_DIMS);
                hipdnnSdkGraphFree(g);
                return nullptr;
            }
            t.ndim = nd;
            t.is_virtual = ft->is_virtual();
            t.is_by_value = ft->is_by_value();
            if (ft->value()) {
                if (ft->value()->size() > sizeof(t.value)) {
                    hipdnnSdkFormat(err, err_len, "graph bytes: tensor uid %lld value too long",
                                    static_cast<long long>(t.uid));
                    hipdnnSdkGraphFree(g);
                    return nullptr;
                }
                std::memcpy(t.value, ft->value()->data(), ft->value()->size());
            }
        }
    }
    if (fg->nodes() && fg->nodes()->size() > 0) {
        uint32_t n = fg->nodes()->size();
        g->nodes = static_cast<hipdnnSdkNode*>(std::calloc(n, sizeof(hipdnnSdkNode)));
        if (!g->nodes) goto oom;
        for (uint32_t i = 0; i < n; ++i) {
            const fb::Node* fn = fg->nodes()->Get(i);
            hipdnnSdkNode& node = g->nodes[i];
            hipdnnSdkNodeInit(&node, static_cast<hipdnnOpKind_t>(fn->kind()));
            node.name = dup_string(fn->name());
            g->num_nodes = static_cast<int32_t>(i + 1);
            if (!node.name) goto oom;
            node.compute_type = static_cast<hipdnnDataType_t>(fn->compute_type());
            node.mode = fn->mode();
            node.conv_mode = fn->conv_mode();
            int32_t np = 0, nq = 0, nst = 0, ndl = 0;
            if (!copy_longs(fn->inputs(), node.inputs, HIPDNN_MAX_PORTS, nullptr) ||
                !copy_longs(fn->outputs(), node.outputs, HIPDNN_MAX_PORTS, nullptr) ||
                !copy_longs(fn->pre_padding(), node.pre_padding, HIPDNN_MAX_SPATIAL, &np) ||
                !copy_longs(fn->post_padding(), node.post_padding, HIPDNN_MAX_SPATIAL, &nq) ||
                !copy_longs(fn->stride(), node.stride, HIPDNN_MAX_SPATIAL, &nst) ||
                !copy_longs(fn->dilation(), node.dilation, HIPDNN_MAX_SPATIAL, &ndl) ||
                np != nq || np != nst || np != ndl) {
                hipdnnSdkFormat(err, err_len,
                                "graph bytes: node %u ('%s') has too many ports or "
                                "inconsistent convolution parameters",
                                i, node.name);
                hipdnnSdkGraphFree(g);
                return nullptr;
            }
            node.num_spatial = np;
            node.lower_clip = fn->lower_clip();
            node.upper_clip = fn->upper_clip();
            node.lower_clip_slope = fn->lower_clip_slope();
        }
    }
    return g;
oom:
    hipdnnSdkGraphFree(g);
    hipdnnSdkFormat(err, err_len, "graph bytes: out of memory while decoding");
    return nullptr;
}

extern "C" int hipdnnSdkEngineConfigEncode(const hipdnnSdkEngineConfig* cfg, uint8_t** data,
                                           size_t* size) {
    try {
        flatbuffers::FlatBufferBuilder b(128);
        std::vector<fb::KnobChoice> knobs;
        for (int32_t i = 0; i < cfg->num_knobs; ++i)
            knobs.emplace_back(cfg->knobs[i].knob_id, cfg->knobs[i].value);
        auto kv = b.CreateVectorOfStructs(knobs);
        b.Finish(fb::CreateEngineConfig(b, cfg->engine_id, kv), fb::EngineConfigIdentifier());
        return finish(b, data, size);
    } catch (const std::bad_alloc&) {
        return -1;
    }
}

extern "C" hipdnnSdkEngineConfig* hipdnnSdkEngineConfigDecode(const uint8_t* data,
                                                               size_t size, char* err,
                                                               size_t err_len) {
    if (!data || size == 0) {
        hipdnnSdkFormat(err, err_len, "engine config bytes: empty buffer");
        return nullptr;
    }
    flatbuffers::Verifier verifier(data, size);
    if (!fb::VerifyEngineConfigBuffer(verifier)) {
        hipdnnSdkFormat(err, err_len, "engine config bytes: fail FlatBuffers verification");
        return nullptr;
    }
    const fb::EngineConfig* fc = fb::GetEngineConfig(data);
    auto* cfg =
        static_cast<hipdnnSdkEngineConfig*>(std::calloc(1, sizeof(hipdnnSdkEngineConfig)));
    if (!cfg) {
        hipdnnSdkFormat(err, err_len, "engine config bytes: out of memory");
        return nullptr;
    }
    cfg->engine_id = fc->engine_id();
    if (fc->knobs() && fc->knobs()->size() > 0) {
        uint32_t n = fc->knobs()->size();
        cfg->knobs =
            static_cast<hipdnnSdkKnobChoice*>(std::calloc(n, sizeof(hipdnnSdkKnobChoice)));
        if (!cfg->knobs) {
            std::free(cfg);
            hipdnnSdkFormat(err, err_len, "engine config bytes: out of memory");
            return nullptr;
        }
        for (uint32_t i = 0; i < n; ++i) {
            cfg->knobs[i].knob_id = fc->knobs()->Get(i)->knob_id();
            cfg->knobs[i].value = fc->knobs()->Get(i)->value();
        }
        cfg->num_knobs = static_cast<int32_t>(n);
    }
    return cfg;
}

extern "C" void hipdnnSdkEngineConfigFree(hipdnnSdkEngineConfig* cfg) {
    if (!cfg) return;
    std::free(cfg->knobs);
    std::free(cfg);
}
