/* TER's edit distance: sacrebleu's lib_ter.BeamEditDistance._edit_distance, computed from scratch, in C.
 *
 * The same beam around the pseudo-diagonal (widened for very unequal lengths), the same costs (1 each), the
 * same preference on ties (substitution or match, then deletion, then insertion: sacrebleu's order, since it
 * flips the trace afterwards) and the same trace read back from the last cell. Words arrive as integers:
 * equal ids are equal words (the caller maps every reference word to its id and every other word to -1).
 * sacrebleu caches rows of hypothesis prefixes; rows depend only on the prefix, the lengths and the beam, all
 * fixed within one reference's shift search, so computing them again gives the same rows.
 *
 * Returns the distance, -1 when the matrix cannot be allocated, -2 when the trace meets a cell the beam never
 * set (sacrebleu raises there; the caller falls back to it so the same exception follows).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define BEAM_WIDTH 25
#define INT_INFINITY 10000000000000000LL /* sacrebleu's int(1e16) */
#define OP_INS 'i'
#define OP_DEL 'd'
#define OP_NOP ' '
#define OP_SUB 's'
#define OP_UNDEF 'x'

int64_t ter_edit_distance(const int32_t *hyp, int32_t n_hyp, const int32_t *ref, int32_t n_ref, char *trace,
                          int32_t *trace_len) {
    const int64_t width = (int64_t)n_ref + 1;
    const int64_t cells = ((int64_t)n_hyp + 1) * width;
    int64_t *cost = malloc((size_t)cells * sizeof(int64_t));
    char *op = malloc((size_t)cells);
    if (cost == NULL || op == NULL) {
        free(cost);
        free(op);
        return -1;
    }
    for (int64_t j = 0; j < width; j++) {
        cost[j] = j;
        op[j] = OP_INS;
    }
    for (int64_t k = width; k < cells; k++) {
        cost[k] = INT_INFINITY;
        op[k] = OP_UNDEF;
    }
    const double length_ratio = n_hyp > 0 ? (double)n_ref / (double)n_hyp : 1.0;
    int64_t beam_width = BEAM_WIDTH;
    if (BEAM_WIDTH < length_ratio / 2) {
        beam_width = (int64_t)ceil(length_ratio / 2 + BEAM_WIDTH);
    }
    for (int64_t i = 1; i <= n_hyp; i++) {
        const int64_t pseudo_diag = (int64_t)floor((double)i * length_ratio);
        int64_t min_j = pseudo_diag - beam_width > 0 ? pseudo_diag - beam_width : 0;
        int64_t max_j = pseudo_diag + beam_width < width ? pseudo_diag + beam_width : width;
        if (i == n_hyp) {
            max_j = width;
        }
        int64_t *row = cost + i * width, *above = cost + (i - 1) * width;
        char *row_op = op + i * width;
        for (int64_t j = min_j; j < max_j; j++) {
            if (j == 0) {
                row[0] = above[0] + 1;
                row_op[0] = OP_DEL;
                continue;
            }
            const int same = hyp[i - 1] == ref[j - 1];
            int64_t best = row[j];
            char best_op = row_op[j];
            const int64_t sub = above[j - 1] + (same ? 0 : 1), del = above[j] + 1, ins = row[j - 1] + 1;
            if (best > sub) { best = sub; best_op = same ? OP_NOP : OP_SUB; }
            if (best > del) { best = del; best_op = OP_DEL; }
            if (best > ins) { best = ins; best_op = OP_INS; }
            row[j] = best;
            row_op[j] = best_op;
        }
    }
    /* the trace, written backwards from its end, then moved to the front of the buffer */
    const int64_t capacity = (int64_t)n_hyp + n_ref;
    int64_t at = capacity, i = n_hyp, j = n_ref;
    int64_t result = cost[(int64_t)n_hyp * width + n_ref];
    while (i > 0 || j > 0) {
        const char o = op[i * width + j];
        if (at == 0 || (o != OP_SUB && o != OP_NOP && o != OP_INS && o != OP_DEL)) {
            result = -2;
            break;
        }
        trace[--at] = o;
        if (o == OP_SUB || o == OP_NOP) { i--; j--; }
        else if (o == OP_INS) { j--; }
        else { i--; }
    }
    free(cost);
    free(op);
    if (result < 0) {
        return result;
    }
    for (int64_t k = at; k < capacity; k++) {
        trace[k - at] = trace[k];
    }
    *trace_len = (int32_t)(capacity - at);
    return result;
}
