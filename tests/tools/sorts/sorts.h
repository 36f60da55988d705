/* The two sorts of the sort scenario: one program measures either, chosen when it is compiled (-DSORT_BUBBLE for
   bubble sort, merge sort otherwise), so that both runs report the same benchmark name. */
#ifndef SCALECHECK_TEST_SORTS_H
#define SCALECHECK_TEST_SORTS_H

#include <string.h>

/* Both sorts compare without a branch: a benchmark that sorts the same input again and again would otherwise let
   the branch predictor learn the input's comparisons at small sizes only, which bends the measured curve. */

#ifdef SORT_BUBBLE
/* Bubble sort: n (n - 1) / 2 compare-and-swap steps whatever the input. */
static void bubble_sort(int *values, long n) {
    for (long end = n - 1; end > 0; --end) {
        for (long j = 0; j < end; ++j) {
            int left = values[j], right = values[j + 1];
            int swap = left > right;
            values[j] = swap ? right : left;
            values[j + 1] = swap ? left : right;
        }
    }
}
#else
/* Top-down merge sort with a scratch array of n values. */
static void merge_sort(int *values, int *scratch, long n) {
    if (n < 2) {
        return;
    }
    long half = n / 2;
    merge_sort(values, scratch, half);
    merge_sort(values + half, scratch, n - half);
    long i = 0, j = half, k = 0;
    while (i < half && j < n) {
        int left = values[i], right = values[j];
        int take_left = left <= right;
        scratch[k++] = take_left ? left : right;
        i += take_left;
        j += 1 - take_left;
    }
    while (i < half) {
        scratch[k++] = values[i++];
    }
    while (j < n) {
        scratch[k++] = values[j++];
    }
    memcpy(values, scratch, (size_t)n * sizeof(int));
}
#endif

/* Sort `values` (n of them) with the algorithm chosen at compile time; `scratch` holds n values. */
static void sort_ints(int *values, int *scratch, long n) {
#ifdef SORT_BUBBLE
    (void)scratch;
    bubble_sort(values, n);
#else
    merge_sort(values, scratch, n);
#endif
}

#endif
