// Google Benchmark of one sort over n = 64..4096 (BM_Sort/64, BM_Sort/128, ...), with its own complexity estimate.
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

#include "sorts.h"

static void BM_Sort(benchmark::State& state) {
    const long n = state.range(0);
    std::vector<int> input(n), values(n), scratch(n);
    std::mt19937 generator(20240601);
    for (int& value : input) {
        value = static_cast<int>(generator());
    }
    for (auto _ : state) {
        std::memcpy(values.data(), input.data(), n * sizeof(int));  // every iteration sorts the same input
        sort_ints(values.data(), scratch.data(), n);
        benchmark::DoNotOptimize(values.data());
    }
    state.SetComplexityN(n);
}
// 4096 values (16 kB, and as much scratch) stay in the CPU's first-level cache, so every comparison costs the same;
// bubble sort takes 6 ms there, merge sort 0.1 ms
BENCHMARK(BM_Sort)->RangeMultiplier(2)->Range(64, 4096)->Complexity();

BENCHMARK_MAIN();
