// twice(x: float64 IN, out: float64 OUT): out = 2 * x.
#pragma once

inline void twice(const double* x, double* out, long long n) {
    for (long long i = 0; i < n; ++i) out[i] = 2 * x[i];
}
