// matmul.cpp — the kernel configs/build.ini tunes: C = A * B for n x n doubles, blocked by
// BLOCK (a -D at build time, like the optimisation level), so each build is a code variant.
//   matmul N            times the blocked multiply, prints flotilla-metric: gflops=... seconds=...
//   matmul N --verify   compares it with a plain triple loop; exit 1 when they differ
// The patches in ../patches change multiply_blocked() only, so --verify's reference stays true.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifndef BLOCK
#define BLOCK 32
#endif

using Matrix = std::vector<double>;

static void multiply_blocked(const Matrix& a, const Matrix& b, Matrix& c, int n) {
  for (int ii = 0; ii < n; ii += BLOCK)
    for (int kk = 0; kk < n; kk += BLOCK)
      for (int jj = 0; jj < n; jj += BLOCK)
        for (int i = ii; i < ii + BLOCK && i < n; ++i)
          for (int k = kk; k < kk + BLOCK && k < n; ++k) {
            const double aik = a[i * n + k];
            for (int j = jj; j < jj + BLOCK && j < n; ++j) c[i * n + j] += aik * b[k * n + j];
          }
}

static void multiply_plain(const Matrix& a, const Matrix& b, Matrix& c, int n) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int k = 0; k < n; ++k) sum += a[i * n + k] * b[k * n + j];
      c[i * n + j] = sum;
    }
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 256;
  const bool verify = argc > 2 && std::strcmp(argv[2], "--verify") == 0;
  if (n < 1 || n > 4096) {
    std::fprintf(stderr, "matmul: N must be 1..4096\n");
    return 2;
  }
  Matrix a(n * n), b(n * n), c(n * n, 0.0);
  for (int i = 0; i < n * n; ++i) {  // deterministic, not all equal
    a[i] = (i % 7) * 0.25 - 0.5;
    b[i] = (i % 5) * 0.5 - 1.0;
  }
  const auto start = std::chrono::steady_clock::now();
  multiply_blocked(a, b, c, n);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!verify) {
    std::printf("flotilla-metric: gflops=%.6g seconds=%.6g block=%d\n", 2.0 * n * n * n / seconds / 1e9, seconds,
                BLOCK);
    return 0;
  }
  Matrix reference(n * n);
  multiply_plain(a, b, reference, n);
  for (int i = 0; i < n * n; ++i)
    if (std::abs(c[i] - reference[i]) > 1e-9 * (1 + std::abs(reference[i]))) {
      std::printf("matmul: wrong result at (%d, %d): %.17g, expected %.17g\n", i / n, i % n, c[i], reference[i]);
      return 1;
    }
  std::printf("matmul: %d x %d result matches the plain loop\n", n, n);
  return 0;
}
