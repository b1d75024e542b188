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

// Copies a [long] vector of at most `max` entries; false if longer.  memcpy, since the
// verifier does not check that the elements are 8-byte aligned.
bool copy_longs(const flatbuffers::Vector<int64_t>* v, int64_t* out, int32_t max,
                int32_t* n) {
    int32_t count = v ? static_cast<int32_t>(v->size()) : 0;
    if (v && v->size() > static_cast<uint32_t>(max)) return false;
    if (count) std::memcpy(out, v->Data(), static_cast<size_t>(count) * sizeof(int64_t));
    if (n) *n = count;
    return true;
}

// C++ forbids converting a number outside an enum's range to the enum type (UBSan's
// -fsanitize=enum); the data types read here are judged by validation, in C, where enums are
// ints, so they are stored as the int they are.
template <typename E>
void store_enum(E& field, int32_t raw) {
    static_assert(sizeof(E) == sizeof(int32_t), "hipdnn's C enums are int-sized");
    std::memcpy(&field, &raw, sizeof(raw));
}

// Field index -> vtable offset, as flatc numbers the fields of a table.
flatbuffers::voffset_t field(int index) {
    return static_cast<flatbuffers::voffset_t>(4 + 2 * index);
}

// Field index of each port and parameter of an op (graph.fbs; hipdnnSdkOpFieldIndex).
int in_field(const hipdnnSdkOpInfo& info, int p) {
    return hipdnnSdkOpFieldIndex(&info, HIPDNN_SDK_FIELD_INPUT, p);
}
int out_field(const hipdnnSdkOpInfo& info, int p) {
    return hipdnnSdkOpFieldIndex(&info, HIPDNN_SDK_FIELD_OUTPUT, p);
}
int param_field(const hipdnnSdkOpInfo& info, int a) {
    return hipdnnSdkOpFieldIndex(&info, HIPDNN_SDK_FIELD_PARAM, a);
}

// One node's op table (see graph.fbs): ports and parameters, by field index.
flatbuffers::Offset<void> encode_op(flatbuffers::FlatBufferBuilder& b, const hipdnnSdkNode& n,
                                    const hipdnnSdkOpInfo& info) {
    flatbuffers::Offset<flatbuffers::Vector<int64_t>> lists[HIPDNN_MAX_OP_ATTRS];
    for (int a = 0; a < info.num_attrs; ++a)
        if (info.attrs[a].kind == HIPDNN_OP_ATTR_INT64_LIST && n.attrs[a].count > 0)
            lists[a] = b.CreateVector(n.attrs[a].i, static_cast<size_t>(n.attrs[a].count));
    auto start = b.StartTable();
    for (int p = 0; p < info.num_inputs; ++p)
        if (n.inputs[p] != HIPDNN_NO_TENSOR)
            b.AddElement<int64_t>(field(in_field(info, p)), n.inputs[p]);
    for (int p = 0; p < info.num_outputs; ++p)
        if (n.outputs[p] != HIPDNN_NO_TENSOR)
            b.AddElement<int64_t>(field(out_field(info, p)), n.outputs[p]);
    for (int a = 0; a < info.num_attrs; ++a) {
        const hipdnnSdkAttrValue& v = n.attrs[a];
        const flatbuffers::voffset_t f = field(param_field(info, a));
        // Scalars are always written (their value is the default when unset); a list only
        // when set, since an unset list takes its length from the tensors.
        switch (info.attrs[a].kind) {
        case HIPDNN_OP_ATTR_INT64_LIST:
            if (v.count > 0) b.AddOffset(f, lists[a]);
            break;
        case HIPDNN_OP_ATTR_DOUBLE: b.AddElement<double>(f, v.d); break;
        case HIPDNN_OP_ATTR_BOOLEAN: b.AddElement<uint8_t>(f, v.i[0] != 0); break;
        default: b.AddElement<int64_t>(f, v.i[0]); break;
        }
    }
    return flatbuffers::Offset<void>(b.EndTable(start));
}

// The reverse, on a table the generated verifier has checked against its schema type.
bool decode_op(const flatbuffers::Table* t, const hipdnnSdkOpInfo& info, hipdnnSdkNode& n) {
    for (int p = 0; p < info.num_inputs; ++p)
        n.inputs[p] = t->GetField<int64_t>(field(in_field(info, p)), HIPDNN_NO_TENSOR);
    for (int p = 0; p < info.num_outputs; ++p)
        n.outputs[p] = t->GetField<int64_t>(field(out_field(info, p)), HIPDNN_NO_TENSOR);
    for (int a = 0; a < info.num_attrs; ++a) {
        hipdnnSdkAttrValue& v = n.attrs[a];
        const flatbuffers::voffset_t f = field(param_field(info, a));
        if (!t->CheckField(f)) continue;
        switch (info.attrs[a].kind) {
        case HIPDNN_OP_ATTR_INT64_LIST: {
            auto* vec = t->GetPointer<const flatbuffers::Vector<int64_t>*>(f);
            if (!copy_longs(vec, v.i, info.attrs[a].max_count, &v.count)) return false;
            break;
        }
        case HIPDNN_OP_ATTR_DOUBLE:
            v.d = t->GetField<double>(f, 0.0);
            v.count = 1;
            break;
        case HIPDNN_OP_ATTR_BOOLEAN:
            v.i[0] = t->GetField<uint8_t>(f, 0) != 0;
            v.count = 1;
            break;
        default:
            v.i[0] = t->GetField<int64_t>(f, 0);
            v.count = 1;
            break;
        }
    }
    return true;
}

// Version 3 where a graph uses what version 2 cannot say (attention's ALiBi, and the
// attention features that follow it: a parameter past use_padding_mask off its default,
// or a port added since),
// so that a reader of version 2 alone refuses it by name rather than running it without
// the feature; every other graph stays version 2, which such readers still take.
uint32_t format_version_of(const hipdnnSdkGraph* g) {
    for (int32_t i = 0; i < g->num_tensors; ++i)  // sdpa's ragged offsets
        if (g->tensors[i].has_ragged_offset) return HIPDNN_GRAPH_FORMAT_VERSION_ATTENTION_EXT;
    for (int32_t i = 0; i < g->num_nodes; ++i) {
        const hipdnnSdkNode& n = g->nodes[i];
        if (n.kind != HIPDNN_OP_SDPA_FWD && n.kind != HIPDNN_OP_SDPA_BWD) continue;
        const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n.kind);
        for (int a = HIPDNN_SDPA_ALIBI; a < info->num_attrs; ++a) {
            const double v = info->attrs[a].kind == HIPDNN_OP_ATTR_DOUBLE
                                 ? n.attrs[a].d : static_cast<double>(n.attrs[a].i[0]);
            if (n.attrs[a].count && v != info->attrs[a].default_value)
                return HIPDNN_GRAPH_FORMAT_VERSION_ATTENTION_EXT;
        }
        // a port added since (page tables, dropout's seed, offset and rng_dump)
        const int params = hipdnnSdkOpFieldIndex(info, HIPDNN_SDK_FIELD_PARAM, 0);
        for (int p = 0; p < info->num_inputs; ++p)
            if (n.inputs[p] != HIPDNN_NO_TENSOR &&
                hipdnnSdkOpFieldIndex(info, HIPDNN_SDK_FIELD_INPUT, p) >= params)
                return HIPDNN_GRAPH_FORMAT_VERSION_ATTENTION_EXT;
        for (int p = 0; p < info->num_outputs; ++p)
            if (n.outputs[p] != HIPDNN_NO_TENSOR &&
                hipdnnSdkOpFieldIndex(info, HIPDNN_SDK_FIELD_OUTPUT, p) >= params)
                return HIPDNN_GRAPH_FORMAT_VERSION_ATTENTION_EXT;
    }
    return HIPDNN_GRAPH_FORMAT_VERSION;
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
            size_t vsize = t.is_by_value && t.has_value ? hipdnnSdkDataTypeSize(t.data_type) : 0;
            auto value = b.CreateVector(t.value, vsize);
            flatbuffers::Optional<int64_t> ragged = flatbuffers::nullopt;
            if (t.has_ragged_offset) ragged = t.ragged_offset;
            tensors.push_back(fb::CreateTensor(b, t.uid, name, t.data_type, dims, strides,
                                               t.is_virtual, t.is_by_value, value, ragged));
        }
        std::vector<flatbuffers::Offset<fb::Node>> nodes;
        for (int32_t i = 0; i < g->num_nodes; ++i) {
            const hipdnnSdkNode& n = g->nodes[i];
            const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n.kind);
            if (!info) return -1;  // validated graphs only hold known ops
            auto name = b.CreateString(n.name ? n.name : "");
            auto op = encode_op(b, n, *info);
            nodes.push_back(fb::CreateNode(b, name, n.compute_type,
                                           static_cast<fb::Op>(n.kind), op));
        }
        auto name = b.CreateString(g->name ? g->name : "");
        auto tv = b.CreateVector(tensors);
        auto nv = b.CreateVector(nodes);
        b.Finish(fb::CreateGraph(b, name, tv, nv, format_version_of(g)),
                 fb::GraphIdentifier());
        return finish(b, data, size);
    } catch (const std::bad_alloc&) {
        return -1;
    }
}

namespace {

// FlatBuffers reads scalars in place and its verifier checks their alignment relative to
// the buffer's start only, so the start itself must be 8-aligned (a Python memoryview
// slice, a byte in a file read into a larger buffer: callers' bytes can sit anywhere).
// Misaligned bytes are decoded from an aligned copy.
class AlignedBytes {
  public:
    AlignedBytes(const uint8_t* data, size_t size) : data_(data) {
        if (reinterpret_cast<uintptr_t>(data) % 8 != 0) {
            copy_ = static_cast<uint8_t*>(std::malloc(size));  // malloc: aligned for any scalar
            if (copy_) std::memcpy(copy_, data, size);
            data_ = copy_;
        }
    }
    ~AlignedBytes() { std::free(copy_); }
    AlignedBytes(const AlignedBytes&) = delete;
    AlignedBytes& operator=(const AlignedBytes&) = delete;
    const uint8_t* get() const { return data_; }  // nullptr: out of memory

  private:
    const uint8_t* data_;
    uint8_t* copy_ = nullptr;
};

hipdnnSdkGraph* decode_graph(const uint8_t* data, size_t size, char* err, size_t err_len);

}  // namespace

extern "C" hipdnnSdkGraph* hipdnnSdkGraphDecode(const uint8_t* data, size_t size, char* err,
                                                size_t err_len) {
    if (!data || size == 0) {
        hipdnnSdkFormat(err, err_len, "graph bytes: empty buffer");
        return nullptr;
    }
    AlignedBytes aligned(data, size);
    if (!aligned.get()) {
        hipdnnSdkFormat(err, err_len, "graph bytes: out of memory while decoding");
        return nullptr;
    }
    return decode_graph(aligned.get(), size, err, err_len);
}

namespace {

bool out_of_memory(char* err, size_t err_len) {
    hipdnnSdkFormat(err, err_len, "graph bytes: out of memory while decoding");
    return false;
}

// The version first, from the root table alone, so that bytes of another format are
// refused by name rather than as corrupt.
bool check_format_version(const uint8_t* data, size_t size, char* err, size_t err_len) {
    flatbuffers::Verifier head(data, size);
    uint32_t root_off = 0;
    if (size >= 8) std::memcpy(&root_off, data, sizeof(root_off));
    const flatbuffers::Table* root = nullptr;
    if (size >= 8 && flatbuffers::BufferHasIdentifier(data, fb::GraphIdentifier()) &&
        root_off % 4 == 0 && root_off <= size - 4)
        root = reinterpret_cast<const flatbuffers::Table*>(data + root_off);
    if (!root || !root->VerifyTableStart(head) ||
        !root->VerifyField<uint32_t>(head, fb::Graph::VT_FORMAT_VERSION, 4)) {
        hipdnnSdkFormat(err, err_len,
                        "graph bytes: %zu bytes fail FlatBuffers verification (truncated, "
                        "corrupted or not a hipdnn graph)",
                        size);
        return false;
    }
    uint32_t version = root->GetField<uint32_t>(fb::Graph::VT_FORMAT_VERSION, 1);
    if (version != HIPDNN_GRAPH_FORMAT_VERSION &&
        version != HIPDNN_GRAPH_FORMAT_VERSION_ATTENTION_EXT) {
        hipdnnSdkFormat(err, err_len,
                        "graph bytes: format version %u, but this hipdnn reads versions %d "
                        "and %d only; serialize the graph again with this version",
                        version, HIPDNN_GRAPH_FORMAT_VERSION,
                        HIPDNN_GRAPH_FORMAT_VERSION_ATTENTION_EXT);
        return false;
    }
    return true;
}

// A tensor's fields after its name.
bool decode_tensor(const fb::Tensor* ft, hipdnnSdkTensor& t, char* err, size_t err_len) {
    t.uid = ft->uid();
    store_enum(t.data_type, ft->data_type());
    int32_t nd = 0, ns = 0;
    if (!copy_longs(ft->dims(), t.dims, HIPDNN_MAX_DIMS, &nd) ||
        !copy_longs(ft->strides(), t.strides, HIPDNN_MAX_DIMS, &ns) || nd != ns) {
        hipdnnSdkFormat(err, err_len,
                        "graph bytes: tensor uid %lld has bad dims/strides (rank over "
                        "%d or lengths differ)",
                        static_cast<long long>(t.uid), HIPDNN_MAX_DIMS);
        return false;
    }
    t.ndim = nd;
    t.is_virtual = ft->is_virtual();
    t.is_by_value = ft->is_by_value();
    t.has_value = t.is_by_value && ft->value() && ft->value()->size() > 0;
    if (ft->value()) {
        if (ft->value()->size() > sizeof(t.value)) {
            hipdnnSdkFormat(err, err_len, "graph bytes: tensor uid %lld value too long",
                            static_cast<long long>(t.uid));
            return false;
        }
        std::memcpy(t.value, ft->value()->data(), ft->value()->size());
    }
    const flatbuffers::Optional<int64_t> ragged = ft->ragged_offset();
    t.has_ragged_offset = ragged.has_value();
    t.ragged_offset = ragged.has_value() ? *ragged : 0;
    return true;
}

// g's tensors.  num_tensors counts each one begun, so that hipdnnSdkGraphFree frees what a
// failure leaves.
bool decode_tensors(const fb::Graph* fg, hipdnnSdkGraph* g, char* err, size_t err_len) {
    if (!fg->tensors() || fg->tensors()->size() == 0) return true;
    uint32_t n = fg->tensors()->size();
    g->tensors = static_cast<hipdnnSdkTensor*>(std::calloc(n, sizeof(hipdnnSdkTensor)));
    if (!g->tensors) return out_of_memory(err, err_len);
    for (uint32_t i = 0; i < n; ++i) {
        const fb::Tensor* ft = fg->tensors()->Get(i);
        hipdnnSdkTensor& t = g->tensors[i];
        t.name = dup_string(ft->name());
        g->num_tensors = static_cast<int32_t>(i + 1);
        if (!t.name) return out_of_memory(err, err_len);
        if (!decode_tensor(ft, t, err, err_len)) return false;
    }
    return true;
}

// g's nodes, counted in num_nodes as the tensors are.  Only known kinds become a
// hipdnnOpKind_t (see store_enum).
bool decode_nodes(const fb::Graph* fg, hipdnnSdkGraph* g, char* err, size_t err_len) {
    if (!fg->nodes() || fg->nodes()->size() == 0) return true;
    uint32_t n = fg->nodes()->size();
    g->nodes = static_cast<hipdnnSdkNode*>(std::calloc(n, sizeof(hipdnnSdkNode)));
    if (!g->nodes) return out_of_memory(err, err_len);
    for (uint32_t i = 0; i < n; ++i) {
        const fb::Node* fn = fg->nodes()->Get(i);
        hipdnnSdkNode& node = g->nodes[i];
        int32_t kind = static_cast<int32_t>(fn->op_type());
        const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(static_cast<hipdnnOpKind_t>(kind));
        if (info) hipdnnSdkNodeInit(&node, static_cast<hipdnnOpKind_t>(kind));
        node.name = dup_string(fn->name());
        g->num_nodes = static_cast<int32_t>(i + 1);
        if (!node.name) return out_of_memory(err, err_len);
        store_enum(node.compute_type, fn->compute_type());
        if (!info || !fn->op()) {
            hipdnnSdkFormat(err, err_len, "graph bytes: node %u ('%s') has unknown op kind %d",
                            i, node.name, kind);
            return false;
        }
        if (!decode_op(static_cast<const flatbuffers::Table*>(fn->op()), *info, node)) {
            hipdnnSdkFormat(err, err_len,
                            "graph bytes: node %u ('%s') has a parameter list longer than "
                            "its op allows",
                            i, node.name);
            return false;
        }
    }
    return true;
}

hipdnnSdkGraph* decode_graph(const uint8_t* data, size_t size, char* err, size_t err_len) {
    if (!check_format_version(data, size, err, err_len)) return nullptr;
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
    if (!g) {
        out_of_memory(err, err_len);
        return nullptr;
    }
    g->name = dup_string(fg->name());
    bool ok = g->name ? decode_tensors(fg, g, err, err_len) && decode_nodes(fg, g, err, err_len)
                      : out_of_memory(err, err_len);
    if (ok) return g;
    hipdnnSdkGraphFree(g);
    return nullptr;
}

}  // namespace

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
    AlignedBytes aligned(data, size);
    if (!aligned.get()) {
        hipdnnSdkFormat(err, err_len, "engine config bytes: out of memory");
        return nullptr;
    }
    data = aligned.get();
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
