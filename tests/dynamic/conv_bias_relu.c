/* conv_bias_relu.c - conv_fprop -> pointwise add (bias) -> relu on the reference engine,
 * through the C backend API.  tests/test_dynamic_backend.py builds it twice from the
 * installed package, linked with hipdnn::hipdnn and with hipdnn::hipdnn_dynamic, and
 * compares the two outputs bit for bit and with a float64 reference.
 *
 * Prints, for each of x, w, bias and y: "dims <name> ...", "strides <name> ..." (elements)
 * and "data <name> ..." (the buffer in memory order, each float's bits in hex); then the
 * engine's name and check.h's "N passed, N failed". */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>

#include "graph_builder.h"

static void print_tensor(const char* name, int ndim, const int64_t* dims,
                         const int64_t* strides, const float* data, size_t n) {
    printf("dims %s", name);
    for (int i = 0; i < ndim; ++i) printf(" %lld", (long long)dims[i]);
    printf("\nstrides %s", name);
    for (int i = 0; i < ndim; ++i) printf(" %lld", (long long)strides[i]);
    printf("\ndata %s", name);
    for (size_t i = 0; i < n; ++i) {
        uint32_t bits;
        memcpy(&bits, &data[i], sizeof(bits));
        printf(" %08x", (unsigned)bits);
    }
    printf("\n");
}

/* Elements spanned by a strided tensor. */
static size_t span(int ndim, const int64_t* dims, const int64_t* strides) {
    int64_t last = 0;
    for (int i = 0; i < ndim; ++i) last += (dims[i] - 1) * strides[i];
    return (size_t)last + 1;
}

/* Fixed inputs, the same in every build: a small linear congruential sequence mapped to
 * [-1, 1). */
static void fill(float* p, size_t n, uint32_t seed) {
    for (size_t i = 0; i < n; ++i) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (float)((double)(seed >> 8) / (double)(1u << 24) * 2.0 - 1.0);
    }
}

static hipdnnBackendDescriptor_t make_plan(hipdnnHandle_t h, hipdnnBackendDescriptor_t cfg) {
    hipdnnBackendDescriptor_t plan = gb_new(HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    if (plan && !(CHECK_OK(hipdnnBackendSetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_HANDLE,
                                                     HIPDNN_TYPE_HANDLE, 1, &h)) &&
                  gb_set_desc(plan, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg) &&
                  CHECK_OK(hipdnnBackendFinalize(plan))))
        gb_destroy(&plan);
    return plan;
}

static void test_conv_bias_relu(void) {
    hipdnnHandle_t h = NULL;
    car_graph g;
    memset(&g, 0, sizeof(g));
    hipdnnBackendDescriptor_t heur = NULL, cfg = NULL, plan = NULL, pack = NULL;
    float *x = NULL, *w = NULL, *b = NULL, *y = NULL;
    void* ws = NULL;
    REQUIRE_OK(hipdnnCreate(&h));
    if (!CHECK(car_build(&g, h, 1))) goto done;

    /* The reference engine, whatever else is installed, so both builds run the same code. */
    const char engine[] = "reference_cpu";
    heur = gb_new(HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    hipdnnBackendHeurMode_t mode = HIPDNN_HEUR_MODE_A;
    if (!heur ||
        !CHECK_OK(hipdnnBackendSetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_MODE,
                                            HIPDNN_TYPE_HEUR_MODE, 1, &mode)) ||
        !gb_set_desc(heur, HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, g.graph) ||
        !CHECK_OK(hipdnnBackendSetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_PREFERRED_ENGINE_EXT,
                                            HIPDNN_TYPE_CHAR, (int64_t)strlen(engine),
                                            engine)) ||
        !CHECK_OK(hipdnnBackendFinalize(heur)))
        goto done;
    int64_t count = 0;
    if (!CHECK_OK(hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_RESULTS,
                                            HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count, &cfg)) ||
        !CHECK(count >= 1))
        goto done;
    plan = make_plan(h, cfg);
    if (!plan) goto done;
    char* name = gb_get_string(plan, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_NAME_EXT);
    CHECK(name && strcmp(name, engine) == 0);
    printf("engine %s\n", name ? name : "?");
    free(name);

    int64_t w_strides[4] = {g.w_dims[1] * g.w_dims[2] * g.w_dims[3], g.w_dims[2] * g.w_dims[3],
                            g.w_dims[3], 1};
    int64_t b_strides[4] = {g.b_dims[1], 1, 1, 1};
    size_t nx = span(4, g.x_dims, g.x_strides), nw = span(4, g.w_dims, w_strides);
    size_t nb = span(4, g.b_dims, b_strides), ny = span(4, g.y_dims, g.y_strides);
    x = malloc(nx * sizeof(float)), w = malloc(nw * sizeof(float));
    b = malloc(nb * sizeof(float)), y = malloc(ny * sizeof(float));
    if (!CHECK(x && w && b && y)) goto done;
    fill(x, nx, 1), fill(w, nw, 2), fill(b, nb, 3);
    for (size_t i = 0; i < ny; ++i) y[i] = NAN;

    int64_t ws_size = 0;
    CHECK_OK(hipdnnBackendGetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                       HIPDNN_TYPE_INT64, 1, &count, &ws_size));
    ws = ws_size > 0 ? malloc((size_t)ws_size) : NULL;
    int64_t uids[4] = {CAR_X, CAR_W, CAR_BIAS, CAR_Y};
    void* ptrs[4] = {x, w, b, y};
    pack = gb_new(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    if (!pack ||
        !CHECK_OK(hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                            HIPDNN_TYPE_INT64, 4, uids)) ||
        !CHECK_OK(hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                            HIPDNN_TYPE_VOID_PTR, 4, ptrs)) ||
        !CHECK_OK(hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                            HIPDNN_TYPE_VOID_PTR, 1, &ws)) ||
        !CHECK_OK(hipdnnBackendFinalize(pack)))
        goto done;
    if (!CHECK_OK(hipdnnBackendExecute(h, plan, pack))) goto done;

    print_tensor("x", 4, g.x_dims, g.x_strides, x, nx);
    print_tensor("w", 4, g.w_dims, w_strides, w, nw);
    print_tensor("bias", 4, g.b_dims, b_strides, b, nb);
    print_tensor("y", 4, g.y_dims, g.y_strides, y, ny);
done:
    gb_destroy(&pack);
    gb_destroy(&plan);
    gb_destroy(&cfg);
    gb_destroy(&heur);
    car_destroy(&g);
    free(x), free(w), free(b), free(y), free(ws);
    if (h) CHECK_OK(hipdnnDestroy(h));
}

int main(void) {
    RUN_TEST(test_conv_bias_relu);
    return check_finish();
}
