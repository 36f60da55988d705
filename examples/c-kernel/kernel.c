/* Two kernels on an array of n integers, each measured on its own and reported to `scalecheck measure`:
 *   sort              qsort, O(n log n) comparisons
 *   count_duplicates  compares every pair in a nested loop, O(n^2): the deliberate scalability bug
 * For each kernel: its CPU time (metric time) and the comparisons it made (metric comparisons).
 * Usage: kernel N. Prints the duplicate count on stdout (so that the compiler cannot drop the loop). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CPU time of this process, in seconds: other programs on the machine inflate it less than wall time.
 * (For a multi-threaded or I/O-bound kernel, measure wall time instead: CLOCK_MONOTONIC.) */
static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One JSON line per kernel and metric: to the descriptor `scalecheck measure` names (3 on POSIX), else to the
 * file it names, else to stdout when run by hand. Returns 0, or -1 if the line could not be written. */
static int report(const char *kernel, const char *metric, const char *unit, double value)
{
    const char *fd = getenv("SCALECHECK_METRICS_FD"), *path = getenv("SCALECHECK_METRICS");
    char line[160];
    int len = snprintf(line, sizeof line, "{\"kernel\": \"%s\", \"metric\": \"%s\", \"unit\": \"%s\", "
                       "\"value\": %.15g}\n", kernel, metric, unit, value);
    if (fd != NULL)
        return dprintf(atoi(fd), "%s", line) == len ? 0 : -1;
    FILE *out = path != NULL ? fopen(path, "a") : stdout;
    if (out == NULL || fputs(line, out) == EOF)
        return -1;
    return out == stdout ? 0 : fclose(out);
}

static uint64_t sort_comparisons;  /* counted by compare_ints: qsort's work, whatever its algorithm */

static int compare_ints(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    sort_comparisons++;
    return (x > y) - (x < y);
}

/* Number of pairs i < j with values[i] == values[j], found by comparing every pair; adds the number of
 * comparisons to *comparisons. */
static long count_duplicates(const int *values, long n, uint64_t *comparisons)
{
    long pairs = 0;
    for (long i = 0; i < n; i++) {
        for (long j = i + 1; j < n; j++)
            pairs += values[i] == values[j];
        *comparisons += (uint64_t)(n - i - 1);
    }
    return pairs;
}

int main(int argc, char **argv)
{
    char *end = NULL;
    long n = argc == 2 ? strtol(argv[1], &end, 10) : 0;
    if (n <= 0 || *end != '\0') {
        fprintf(stderr, "usage: %s N   (N > 0: the array size)\n", argv[0]);
        return 2;
    }
    int *values = malloc((size_t)n * sizeof *values);
    int *sorted = malloc((size_t)n * sizeof *sorted);
    if (values == NULL || sorted == NULL) {
        fprintf(stderr, "kernel: cannot allocate two arrays of %ld ints\n", n);
        return 1;
    }
    uint64_t state = 12345;  /* a fixed linear congruential sequence: the same input at every run */
    for (long i = 0; i < n; i++) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        values[i] = (int)((state >> 33) % (uint64_t)n);
    }
    memcpy(sorted, values, (size_t)n * sizeof *values);

    double start = cpu_seconds();
    qsort(sorted, (size_t)n, sizeof *sorted, compare_ints);
    double sort_seconds = cpu_seconds() - start;

    uint64_t count_comparisons = 0;
    start = cpu_seconds();
    long pairs = count_duplicates(values, n, &count_comparisons);
    double count_seconds = cpu_seconds() - start;

    printf("n=%ld duplicate pairs=%ld smallest=%d\n", n, pairs, sorted[0]);
    if (report("sort", "time", "s", sort_seconds) != 0
        || report("sort", "comparisons", "", (double)sort_comparisons) != 0
        || report("count_duplicates", "time", "s", count_seconds) != 0
        || report("count_duplicates", "comparisons", "", (double)count_comparisons) != 0) {
        perror("kernel: cannot report the measurements");
        return 1;
    }
    free(values);
    free(sorted);
    return 0;
}
