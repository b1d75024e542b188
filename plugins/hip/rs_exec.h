// rs_exec.h — what one thread of a resample kernel does (rs_program.h), for the GPU
// (rs_kernels.h) and the host emulation (emulate.cpp), which include pw_exec.h first with
// their macros.  Each thread owns one output element: a pooled value (forward) or a dx value
// (backward), computed in fp32 and stored once in the output's type.
#ifndef HIPDNN_HIP_RS_EXEC_H
#define HIPDNN_HIP_RS_EXEC_H

#include "rs_program.h"

// Coordinates of element e of [N, C, sizes...] and its offset under strides st.
template <int NSP>
PW_FN int64_t rs_offset(const int64_t* st, int64_t n, int64_t c, const int64_t* p) {
    int64_t off = n * st[0] + c * st[1];
    for (int i = 0; i < NSP; ++i) off += p[i] * st[2 + i];
    return off;
}

// Elements fit 31 bits (resample_program.c declines more), so the index arithmetic divides
// in 32 bits: a 64-bit division is a long software sequence on a GPU.
template <int NSP>
PW_FN void rs_unravel(const rs_program& p, int64_t e, const int64_t* sizes, int64_t* n,
                      int64_t* c, int64_t* q) {
    uint32_t r = (uint32_t)e;
    for (int i = NSP - 1; i >= 0; --i) {
        const uint32_t d = (uint32_t)sizes[i], k = div32(r, d);
        q[i] = r - k * d;
        r = k;
    }
    const uint32_t k = div32(r, (uint32_t)p.c);
    *c = r - k * (uint32_t)p.c;
    *n = k;
}

PW_FN int64_t rs_load_idx(const rs_program& p, int64_t off) {
    if (p.idx_bytes == 1) return static_cast<const signed char*>(p.idx.ptr)[off];
    if (p.idx_bytes == 4) return static_cast<const int32_t*>(p.idx.ptr)[off];
    return static_cast<const int64_t*>(p.idx.ptr)[off];
}

PW_FN void rs_store_idx(const rs_program& p, int64_t off, int64_t v) {
    if (p.idx_bytes == 1) static_cast<signed char*>(p.idx.ptr)[off] = (signed char)v;
    else if (p.idx_bytes == 4) static_cast<int32_t*>(p.idx.ptr)[off] = (int32_t)v;
    else static_cast<int64_t*>(p.idx.ptr)[off] = v;
}

// Window of pooled position o: start, end of existing positions, the part inside x.
struct RsWindow {
    int64_t start[RS_MAX_SP], end[RS_MAX_SP], lo[RS_MAX_SP], hi[RS_MAX_SP];
};

template <int NSP>
PW_FN void rs_window(const rs_program& p, const int64_t* o, RsWindow& w) {
    for (int i = 0; i < NSP; ++i) {
        const int64_t s = o[i] * p.stride[i] - p.pre[i], e = s + p.win[i], limit = p.in[i] + p.post[i];
        w.start[i] = s;
        w.end[i] = e < limit ? e : limit;
        w.lo[i] = s > 0 ? s : 0;
        w.hi[i] = e < p.in[i] ? e : p.in[i];
    }
}

template <int NSP>
PW_FN float rs_avg_weight(const rs_program& p, const RsWindow& w) {
    float count = 1.0f;
    for (int i = 0; i < NSP; ++i)
        count *= (float)(p.kind == RS_AVG_INCLUDE ? w.end[i] - w.start[i] : w.hi[i] - w.lo[i]);
    return 1.0f / count;
}

// The first maximum of the window in row-major window order (NaN beats every number, its
// first wins), over padding too under zero_pad; its value and window position (-1: none).
template <int NSP>
PW_FN float rs_window_max(const rs_program& p, const pw_tensor& img, int64_t n, int64_t c,
                          const RsWindow& w, int64_t* at) {
    const int64_t* lo = p.zero_pad ? w.start : w.lo;
    const int64_t* hi = p.zero_pad ? w.end : w.hi;
    int64_t q[RS_MAX_SP];
    float best = -__builtin_huge_valf();
    *at = -1;
    for (int i = 0; i < NSP; ++i) {
        if (lo[i] >= hi[i]) return best;
        q[i] = lo[i];
    }
    for (;;) {
        bool inside = true;
        for (int i = 0; i < NSP; ++i) inside = inside && q[i] >= 0 && q[i] < p.in[i];
        const float v = inside ? load_one(img.ptr, img.dtype, rs_offset<NSP>(img.strides, n, c, q)) : 0.0f;
        if (*at < 0 || v > best || (v != v && best == best)) {
            int64_t k = 0;
            for (int i = 0; i < NSP; ++i) k = k * p.win[i] + (q[i] - w.start[i]);
            best = v;
            *at = k;
        }
        int i = NSP - 1;
        for (; i >= 0; --i) {
            if (++q[i] < hi[i]) break;
            q[i] = lo[i];
        }
        if (i < 0) return best;
    }
}

// Max pooling over a 2-D window without padding candidates, the storage type DT known: the
// window's rows walked directly from the plane's offset.  The general walk (an odometer
// over any rank, a bounds check and a type switch a tap) ran maxpool at half PyTorch's
// speed (RESULTS.md, tenth run).
template <int DT>
PW_FN void rs_max2d(const rs_program& p, int64_t e) {
    int64_t n, c, o[RS_MAX_SP];
    rs_unravel<2>(p, e, p.out, &n, &c, o);
    RsWindow w;
    rs_window<2>(p, o, w);
    const int64_t* st = p.image.strides;
    const int64_t plane = n * st[0] + c * st[1];
    float best = -__builtin_huge_valf();
    int64_t at = -1;
    for (int64_t h = w.lo[0]; h < w.hi[0]; ++h) {
        const int64_t row = plane + h * st[2];
        for (int64_t x = w.lo[1]; x < w.hi[1]; ++x) {
            const float v = load_one(p.image.ptr, DT, row + x * st[3]);
            if (at < 0 || v > best || (v != v && best == best)) {
                best = v;
                at = (h - w.start[0]) * p.win[1] + (x - w.start[1]);
            }
        }
    }
    store_one(p.pooled.ptr, p.pooled.dtype, rs_offset<2>(p.pooled.strides, n, c, o), best);
    if (p.idx_bytes) rs_store_idx(p, rs_offset<2>(p.idx.strides, n, c, o), at < 0 ? 0 : at);
}

template <int NSP>
PW_FN void rs_forward(const rs_program& p, int64_t e) {
    if constexpr (NSP == 2) {
        if (p.kind == RS_MAX && !p.zero_pad) { // uniform across the grid
            switch (p.image.dtype) {
            case PW_BF16: rs_max2d<PW_BF16>(p, e); return;
            case PW_F16: rs_max2d<PW_F16>(p, e); return;
            case PW_F32: rs_max2d<PW_F32>(p, e); return;
            default: break;
            }
        }
    }
    int64_t n, c, o[RS_MAX_SP];
    rs_unravel<NSP>(p, e, p.out, &n, &c, o);
    RsWindow w;
    rs_window<NSP>(p, o, w);
    const int64_t yoff = rs_offset<NSP>(p.pooled.strides, n, c, o);
    if (p.kind == RS_MAX) {
        int64_t at;
        const float v = rs_window_max<NSP>(p, p.image, n, c, w, &at);
        store_one(p.pooled.ptr, p.pooled.dtype, yoff, v);
        if (p.idx_bytes) rs_store_idx(p, rs_offset<NSP>(p.idx.strides, n, c, o), at < 0 ? 0 : at);
        return;
    }
    float sum = 0.0f;
    int64_t q[RS_MAX_SP];
    bool empty = false;
    for (int i = 0; i < NSP; ++i) {
        q[i] = w.lo[i];
        empty = empty || w.lo[i] >= w.hi[i];
    }
    while (!empty) {
        sum += load_one(p.image.ptr, p.image.dtype, rs_offset<NSP>(p.image.strides, n, c, q));
        int i = NSP - 1;
        for (; i >= 0; --i) {
            if (++q[i] < w.hi[i]) break;
            q[i] = w.lo[i];
        }
        if (i < 0) break;
    }
    store_one(p.pooled.ptr, p.pooled.dtype, yoff, sum * rs_avg_weight<NSP>(p, w));
}

// dx at image position x: the sum over the windows that cover it of what each routes there.
template <int NSP>
PW_FN void rs_backward(const rs_program& p, int64_t e) {
    int64_t n, c, x[RS_MAX_SP], olo[RS_MAX_SP], ohi[RS_MAX_SP], o[RS_MAX_SP];
    rs_unravel<NSP>(p, e, p.in, &n, &c, x);
    bool empty = false;
    for (int i = 0; i < NSP; ++i) {
        // o covers x when o*s - pre <= x < o*s - pre + win
        const int64_t a = x[i] + p.pre[i] - p.win[i] + 1; // o*s >= a
        int64_t lo = a <= 0 ? 0 : (a + p.stride[i] - 1) / p.stride[i];
        int64_t hi = (x[i] + p.pre[i]) / p.stride[i] + 1; // exclusive
        if (hi > p.out[i]) hi = p.out[i];
        olo[i] = lo;
        ohi[i] = hi;
        o[i] = lo;
        empty = empty || lo >= hi;
    }
    float acc = 0.0f;
    while (!empty) {
        RsWindow w;
        rs_window<NSP>(p, o, w);
        const float dy = load_one(p.grad_pooled.ptr, p.grad_pooled.dtype,
                                  rs_offset<NSP>(p.grad_pooled.strides, n, c, o));
        if (p.kind != RS_MAX) {
            acc += dy * rs_avg_weight<NSP>(p, w);
        } else {
            int64_t at;
            if (p.idx_bytes) {
                at = rs_load_idx(p, rs_offset<NSP>(p.idx.strides, n, c, o));
                if (at < 0 || at >= p.taps) at = -1; // not the forward's index: dropped
            } else {
                (void)rs_window_max<NSP>(p, p.image, n, c, w, &at);
            }
            int64_t k = 0; // x's position in this window, row-major
            for (int i = 0; i < NSP; ++i) k = k * p.win[i] + (x[i] - w.start[i]);
            if (at == k) acc += dy;
        }
        int i = NSP - 1;
        for (; i >= 0; --i) {
            if (++o[i] < ohi[i]) break;
            o[i] = olo[i];
        }
        if (i < 0) break;
    }
    store_one(p.grad_image.ptr, p.grad_image.dtype, rs_offset<NSP>(p.grad_image.strides, n, c, x), acc);
}

#endif
