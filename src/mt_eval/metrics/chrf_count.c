/* chrF's statistics for one segment, in C: sacrebleu's counts, without its Python n-gram dictionaries.
 *
 * Per n-gram order, character orders 1..char_order then word orders 1..word_order: the hypothesis's n-gram
 * count (0 when the reference has none of that order, as sacrebleu counts), the reference's, and the matches
 * (the multiset intersection: per distinct n-gram, the smaller of its two counts). Characters arrive as code
 * points with whitespace already removed, words as integer ids (equal ids are equal words: the caller maps
 * both texts' words through one dictionary). An n-gram is a window of n elements; windows are sorted
 * (lexicographically) and the two sorted lists merged, so equal windows are counted exactly, never hashed.
 *
 * Returns 0, or -1 when memory for the windows cannot be had (the caller then uses its Python path).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int compare_windows(const uint32_t *a, const uint32_t *b, int32_t n) {
    for (int32_t k = 0; k < n; k++) {
        if (a[k] != b[k]) {
            return a[k] < b[k] ? -1 : 1;
        }
    }
    return 0;
}

/* merge sort of window start pointers (n elements each); scratch holds as many pointers as windows */
static void sort_windows(const uint32_t **windows, const uint32_t **scratch, int64_t count, int32_t n) {
    if (count < 2) {
        return;
    }
    const int64_t half = count / 2;
    sort_windows(windows, scratch, half, n);
    sort_windows(windows + half, scratch, count - half, n);
    int64_t i = 0, j = half, k = 0;
    while (i < half && j < count) {
        scratch[k++] = compare_windows(windows[j], windows[i], n) < 0 ? windows[j++] : windows[i++];
    }
    while (i < half) {
        scratch[k++] = windows[i++];
    }
    while (j < count) {
        scratch[k++] = windows[j++];
    }
    memcpy(windows, scratch, (size_t)count * sizeof(*windows));
}

/* (hypothesis windows, reference windows, matches) of order n; -1 on allocation failure */
static int order_statistics(const uint32_t *hyp, int32_t n_hyp, const uint32_t *ref, int32_t n_ref, int32_t n,
                            int64_t *out) {
    const int64_t count_h = n_hyp >= n ? (int64_t)n_hyp - n + 1 : 0;
    const int64_t count_r = n_ref >= n ? (int64_t)n_ref - n + 1 : 0;
    out[0] = count_r > 0 ? count_h : 0;
    out[1] = count_r;
    out[2] = 0;
    if (count_h == 0 || count_r == 0) {
        return 0;
    }
    const uint32_t **buffer = malloc((size_t)(2 * (count_h + count_r)) * sizeof(*buffer));
    if (buffer == NULL) {
        return -1;
    }
    const uint32_t **wh = buffer, **wr = buffer + count_h, **scratch = buffer + count_h + count_r;
    for (int64_t k = 0; k < count_h; k++) {
        wh[k] = hyp + k;
    }
    for (int64_t k = 0; k < count_r; k++) {
        wr[k] = ref + k;
    }
    sort_windows(wh, scratch, count_h, n);
    sort_windows(wr, scratch, count_r, n);
    int64_t i = 0, j = 0, matches = 0;
    while (i < count_h && j < count_r) {
        const int c = compare_windows(wh[i], wr[j], n);
        if (c < 0) {
            i++;
        } else if (c > 0) {
            j++;
        } else {
            int64_t run_h = 1, run_r = 1;
            while (i + run_h < count_h && compare_windows(wh[i + run_h], wh[i], n) == 0) {
                run_h++;
            }
            while (j + run_r < count_r && compare_windows(wr[j + run_r], wr[j], n) == 0) {
                run_r++;
            }
            matches += run_h < run_r ? run_h : run_r;
            i += run_h;
            j += run_r;
        }
    }
    out[2] = matches;
    free(buffer);
    return 0;
}

int chrf_statistics(const uint32_t *hyp_chars, int32_t n_hyp_chars, const uint32_t *ref_chars, int32_t n_ref_chars,
                    int32_t char_order, const uint32_t *hyp_words, int32_t n_hyp_words, const uint32_t *ref_words,
                    int32_t n_ref_words, int32_t word_order, int64_t *out) {
    for (int32_t n = 1; n <= char_order; n++) {
        if (order_statistics(hyp_chars, n_hyp_chars, ref_chars, n_ref_chars, n, out + 3 * (n - 1)) != 0) {
            return -1;
        }
    }
    for (int32_t n = 1; n <= word_order; n++) {
        if (order_statistics(hyp_words, n_hyp_words, ref_words, n_ref_words, n, out + 3 * (char_order + n - 1)) != 0) {
            return -1;
        }
    }
    return 0;
}
