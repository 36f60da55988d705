/* Sorts N pseudo-random ints once and exits: the program hyperfine times, `sort N`. */
#include <stdio.h>
#include <stdlib.h>

#include "sorts.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: sort N\n");
        return 2;
    }
    long n = atol(argv[1]);
    if (n < 1) {
        fprintf(stderr, "sort: N must be a positive number\n");
        return 2;
    }
    int *values = malloc((size_t)n * sizeof(int));
    int *scratch = malloc((size_t)n * sizeof(int));
    if (values == NULL || scratch == NULL) {
        fprintf(stderr, "sort: out of memory\n");
        return 1;
    }
    unsigned state = 20240601u;
    for (long i = 0; i < n; ++i) {
        state = state * 1103515245u + 12345u;
        values[i] = (int)(state >> 8);
    }
    sort_ints(values, scratch, n);
    for (long i = 1; i < n; ++i) {
        if (values[i - 1] > values[i]) {
            fprintf(stderr, "sort: not sorted at %ld\n", i);
            return 1;
        }
    }
    printf("%d\n", values[n / 2]);
    free(values);
    free(scratch);
    return 0;
}
