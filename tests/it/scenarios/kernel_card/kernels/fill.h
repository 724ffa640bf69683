// fill(out: float64 OUT, value: float64 scalar): every element of out becomes value.
#pragma once

inline void fill(double* out, long long n, double value) {
    for (long long i = 0; i < n; ++i) out[i] = value;
}
