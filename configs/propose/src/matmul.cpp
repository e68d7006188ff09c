// matmul.cpp — the program configs/propose.ini improves through proposals: C = A * B for n x n
// doubles, written the plain way (i, j, k), which walks B down its columns.
//   matmul N            times the multiply, prints flotilla-metric: gflops=... seconds=...
//   matmul N --verify   compares it with a reference loop; exit 1 when they differ
// Proposals change multiply() only, so --verify's reference stays true.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using Matrix = std::vector<double>;

static void multiply(const Matrix& a, const Matrix& b, Matrix& c, int n) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int k = 0; k < n; ++k) sum += a.at(i * n + k) * b.at(k * n + j);
      c[i * n + j] = sum;
    }
}

static void reference(const Matrix& a, const Matrix& b, Matrix& c, int n) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      long double sum = 0;
      for (int k = 0; k < n; ++k) sum += static_cast<long double>(a[i * n + k]) * b[k * n + j];
      c[i * n + j] = static_cast<double>(sum);
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
  multiply(a, b, c, n);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!verify) {
    std::printf("flotilla-metric: gflops=%.6g seconds=%.6g\n", 2.0 * n * n * n / seconds / 1e9, seconds);
    return 0;
  }
  Matrix expected(n * n);
  reference(a, b, expected, n);
  for (int i = 0; i < n * n; ++i)
    if (std::abs(c[i] - expected[i]) > 1e-9 * (1 + std::abs(expected[i]))) {
      std::printf("matmul: wrong result at (%d, %d): %.17g, expected %.17g\n", i / n, i % n, c[i], expected[i]);
      return 1;
    }
  std::printf("matmul: %d x %d result matches the reference\n", n, n);
  return 0;
}
