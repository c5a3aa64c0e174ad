#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cstring>
#include <vector>

// One vector is one register of the instruction set the kernel is built for, and a tile's R x NV
// accumulators and its NV matrix vectors fit the register file: a vector wider than the hardware's is
// split by the compiler, its accumulators spilled to memory (built for AVX2, the kernel with AVX-512-sized
// vectors ran 4-50x slower than its AVX-512 build). The numbers are the same whatever the width: every
// output element is one chain of fused multiply-adds, in the order of k, in every build (x86-64-v3 and
// above have FMA; tests/test_scan_kernel_targets.py compares the AVX2 and AVX-512 builds bitwise).
#if defined(__AVX512F__)
constexpr int VB = 64;      // bytes per vector: 16 floats or 8 doubles (one AVX-512 register)
constexpr int MAX_NV = 4;   // 32 registers: 6 x 4 accumulators + 4
#else
constexpr int VB = 32;      // 8 floats or 4 doubles (one AVX register)
constexpr int MAX_NV = 2;   // 16 registers: 6 x 2 accumulators + 2 (+ the broadcast input)
#endif
template <typename T> struct VecOf {
  typedef T type __attribute__((vector_size(VB)));
  typedef T unaligned __attribute__((vector_size(VB), aligned(sizeof(T))));
};
constexpr int R = 6;  // rows per tile (R x NV accumulators in registers)
#if defined(__AVX512F__)  // a vector the compiler would otherwise reload for every use
#define KEEP_IN_REGISTER(x) asm("" : "+v"(x))
#else
#define KEEP_IN_REGISTER(x) ((void)0)
#endif

// per step t: seqs[t*B + i], the sequences sorted by symbol; off[t*(V+1) + v], symbol v's first
static void sort_steps(const int64_t* tok, int64_t B, int64_t T, int64_t V,
                       std::vector<int64_t>& seqs, std::vector<int64_t>& off) {
  seqs.resize(B * T);
  off.assign(T * (V + 1), 0);
  for (int64_t t = 0; t < T; ++t) {
    int64_t* o = off.data() + t * (V + 1);
    for (int64_t b = 0; b < B; ++b) {
      const int64_t v = tok[b * T + t];
      TORCH_CHECK(v >= 0 && v < V, "matrix_scan: symbol ", v, " outside [0, ", V, ")");
      o[v + 1]++;
    }
    for (int64_t v = 0; v < V; ++v) o[v + 1] += o[v];
    std::vector<int64_t> fill(o, o + V);
    for (int64_t b = 0; b < B; ++b) seqs[t * B + fill[tok[b * T + t]]++] = b;
  }
}

// o[0 : width] = (base ? base + a * pm : a), a = one vector of accumulators
template <typename T>
static inline void put(T* o, typename VecOf<T>::type a, int64_t width, const T* base, const T* pm) {
  typedef typename VecOf<T>::unaligned VU;
  constexpr int W = VB / sizeof(T);
  if (width >= W) {
    *(VU*)o = base ? *(const VU*)base + a * *(const VU*)pm : a;
  } else if (width > 0) {
    T buf[W];
    *(VU*)buf = a;  // a store of the value: taking the address of a would keep every accumulator in memory
    for (int64_t j = 0; j < width; ++j) o[j] = base ? base[j] + buf[j] * pm[j] : buf[j];
  }
}

// the inputs of a tile's rows, packed: xp[k R + r] = src_r[k] msk_r[k] (src_r[k] without a mask), so
// that the products read them through one pointer (the rows' own pointers, six or twelve of them, would
// take more general registers than x86-64 has, and the compiler then reloads them from the stack)
template <typename T>
static inline void pack(int rows, int64_t n, const T* const* src, const T* const* msk, T* xp) {
  for (int r = 0; r < rows; ++r) {
    const T* s = src[r];
    if (msk) {
      const T* m = msk[r];
      for (int64_t k = 0; k < n; ++k) xp[k * R + r] = s[k] * m[k];
    } else {
      for (int64_t k = 0; k < n; ++k) xp[k * R + r] = s[k];
    }
  }
}

// for the tile's rows r < RR: out_r[j0 : j0 + NV W] = sum_k xp[k R + r] Mp[k, j0 : j0 + NV W]
// (Mp: n rows of NP columns, zero beyond n), or base_r + (that sum) * pm_r (backward)
template <typename T, int NV, int RR>
static inline void tile(int64_t n, int64_t NP, int64_t j0, const T* Mp, const T* xp, T* const* out,
                        const T* const* base, const T* const* pm) {
  typedef typename VecOf<T>::type V;
  typedef typename VecOf<T>::unaligned VU;
  constexpr int W = VB / sizeof(T);
  V acc[RR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < RR; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[r][v] = V{};
  for (int64_t k = 0; k < n; ++k) {
    const VU* row = (const VU*)(Mp + k * NP + j0);
    const T* x = xp + k * R;
    V m[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      m[v] = row[v];
      KEEP_IN_REGISTER(m[v]);  // loaded once, used by every row of the tile
    }
#pragma GCC unroll 8
    for (int r = 0; r < RR; ++r) {
      const T xr = x[r];
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[r][v] += xr * m[v];
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < RR; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      const int64_t j = j0 + v * W;
      put<T>(out[r] + j, acc[r][v], n - j, base ? base[r] + j : nullptr, base ? pm[r] + j : nullptr);
    }
}

// msk == nullptr: no mask on the inputs
template <typename T, int NV>
static void tile_rows(int rows, int64_t n, int64_t NP, const T* Mp, const T* const* src,
                      const T* const* msk, T* const* out, const T* const* base, const T* const* pm) {
  constexpr int W = VB / sizeof(T);
  static thread_local std::vector<T> packed;
  if ((int64_t)packed.size() < n * R) packed.resize(n * R);
  T* xp = packed.data();
  pack<T>(rows, n, src, msk, xp);
  for (int64_t j0 = 0; j0 < n; j0 += NV * W) {
    int r = 0;
    if (rows == R) {
      tile<T, NV, R>(n, NP, j0, Mp, xp, out, base, pm);
      r = R;
    }
    for (; r + 2 <= rows; r += 2)
      tile<T, NV, 2>(n, NP, j0, Mp, xp + r, out + r, base ? base + r : nullptr, base ? pm + r : nullptr);
    for (; r < rows; ++r)
      tile<T, NV, 1>(n, NP, j0, Mp, xp + r, out + r, base ? base + r : nullptr, base ? pm + r : nullptr);
  }
}

// D[i0 + r, j0 : j0 + NV W] += sum over q < nrows of X[q, i0 + r] G[q, j0 : ...], r < RR
// (X: rows of n, G and D: rows of NP)
template <typename T, int NV, int RR>
static inline void outer(int64_t nrows, int64_t n, int64_t NP, int64_t i0, int64_t j0, const T* X,
                         const T* G, T* D) {
  typedef typename VecOf<T>::type V;
  typedef typename VecOf<T>::unaligned VU;
  constexpr int W = VB / sizeof(T);
  V acc[RR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < RR; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[r][v] = *(const VU*)(D + (i0 + r) * NP + j0 + v * W);
  for (int64_t q = 0; q < nrows; ++q) {
    const VU* grow = (const VU*)(G + q * NP + j0);
    const T* x = X + q * n + i0;
    V g[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      g[v] = grow[v];
      KEEP_IN_REGISTER(g[v]);
    }
#pragma GCC unroll 8
    for (int r = 0; r < RR; ++r) {
      const T xv = x[r];
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[r][v] += xv * g[v];
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < RR; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) *(VU*)(D + (i0 + r) * NP + j0 + v * W) = acc[r][v];
}

// dM (n x n) = X^T G over nrows rows; rows taken CHUNK at a time so that they are read from the
// first-level cache by every strip of R rows of dM
template <typename T, int NV>
static void outer_all(int64_t nrows, int64_t n, int64_t NP, const T* X, const T* G, T* dM) {
  constexpr int W = VB / sizeof(T);
  constexpr int64_t CHUNK = 32;
  std::vector<T> D(n * NP, T(0));
  for (int64_t q0 = 0; q0 < nrows; q0 += CHUNK) {
    const int64_t cq = std::min(CHUNK, nrows - q0);
    const T* Xc = X + q0 * n;
    const T* Gc = G + q0 * NP;
    for (int64_t j0 = 0; j0 < n; j0 += NV * W)
      for (int64_t i0 = 0; i0 < n;) {
        if (i0 + R <= n) {
          outer<T, NV, R>(cq, n, NP, i0, j0, Xc, Gc, D.data());
          i0 += R;
        } else if (i0 + 2 <= n) {
          outer<T, NV, 2>(cq, n, NP, i0, j0, Xc, Gc, D.data());
          i0 += 2;
        } else {
          outer<T, NV, 1>(cq, n, NP, i0, j0, Xc, Gc, D.data());
          i0 += 1;
        }
      }
  }
  for (int64_t i = 0; i < n; ++i) std::memcpy(dM + i * n, D.data() + i * NP, n * sizeof(T));
}

// scratch memory kept from call to call (per thread and type): a buffer allocated afresh for every
// batch would have its pages fault in again every time
template <typename U> static U* scratch(int slot, size_t count) {
  static thread_local std::vector<U> buf[4];
  if (buf[slot].size() < count) buf[slot].resize(count + count / 4);
  return buf[slot].data();
}

struct Tiles {  // the tiles of one step: (symbol, first index into seqs, rows)
  std::vector<int64_t> sym, first;
  std::vector<int> rows;
};

static Tiles make_tiles(const int64_t* off, int64_t V) {
  Tiles tl;
  for (int64_t v = 0; v < V; ++v)
    for (int64_t i = off[v]; i < off[v + 1]; i += R) {
      tl.sym.push_back(v);
      tl.first.push_back(i);
      tl.rows.push_back((int)std::min<int64_t>(R, off[v + 1] - i));
    }
  return tl;
}

template <typename T, int NV>
static void forward_impl(const T* Mp, int64_t NP, const T* h0, bool h0_rows, const int64_t* tok,
                         const T* mask, T* H, int64_t B, int64_t T_, int64_t V, int64_t n) {
  std::vector<T> ones_(n, T(1));
  const T* ones = ones_.data();
  std::vector<int64_t> seqs, off;
  sort_steps(tok, B, T_, V, seqs, off);
  for (int64_t t = 0; t < T_; ++t) {
    Tiles tl = make_tiles(off.data() + t * (V + 1), V);
    const int64_t* sq = seqs.data() + t * B;
    at::parallel_for(0, (int64_t)tl.sym.size(), 1, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        const T* src[R]; const T* msk[R]; T* out[R];
        for (int r = 0; r < tl.rows[i]; ++r) {
          int64_t b = sq[tl.first[i] + r];
          src[r] = t == 0 ? (h0_rows ? h0 + b * n : h0) : H + (b * T_ + t - 1) * n;
          msk[r] = mask ? mask + b * n : nullptr;
          out[r] = H + (b * T_ + t) * n;
        }
        tile_rows<T, NV>(tl.rows[i], n, NP, Mp + tl.sym[i] * n * NP, src, mask ? msk : nullptr, out,
                         nullptr, nullptr);
      }
    });
  }
}

// G: (T, B, NP) state gradients (zero beyond n); dM: (V, n, n)
// rows are kept in the order of the symbol read, all steps together (symbol v's rows are
// cnt[v] .. cnt[v + 1]): state gradients G (rows of NP) and masked inputs X (rows of n); dM: (V, n, n)
template <typename T, int NV>
static void backward_impl(const T* Mtp, int64_t NP, const T* h0, bool h0_rows, const int64_t* tok,
                          const T* mask, const T* H, const T* dH, T* G, T* X, T* dM,
                          int64_t B, int64_t T_, int64_t V, int64_t n) {
  std::vector<int64_t> seqs, off;
  sort_steps(tok, B, T_, V, seqs, off);
  std::vector<int64_t> cnt(V + 1, 0), q(T_ * B);  // q[t B + b]: the row of (t, b)
  for (int64_t t = 0; t < T_; ++t)
    for (int64_t v = 0; v < V; ++v) cnt[v + 1] += off[t * (V + 1) + v + 1] - off[t * (V + 1) + v];
  for (int64_t v = 0; v < V; ++v) cnt[v + 1] += cnt[v];
  {
    std::vector<int64_t> fill(cnt.begin(), cnt.end() - 1);
    for (int64_t t = 0; t < T_; ++t)
      for (int64_t v = 0; v < V; ++v)
        for (int64_t i = off[t * (V + 1) + v]; i < off[t * (V + 1) + v + 1]; ++i)
          q[t * B + seqs[t * B + i]] = fill[v]++;
  }
  at::parallel_for(0, T_, 1, [&](int64_t lo, int64_t hi) {  // X: the masked input of every row
    for (int64_t t = lo; t < hi; ++t)
      for (int64_t b = 0; b < B; ++b) {
        const T* x = t == 0 ? (h0_rows ? h0 + b * n : h0) : H + (b * T_ + t - 1) * n;
        T* o = X + q[t * B + b] * n;
        if (mask) {
          const T* m = mask + b * n;
          for (int64_t j = 0; j < n; ++j) o[j] = x[j] * m[j];
        } else {
          std::memcpy(o, x, n * sizeof(T));
        }
      }
  });
  for (int64_t b = 0; b < B; ++b)  // the last step: only the output's own gradient
    std::memcpy(G + q[(T_ - 1) * B + b] * NP, dH + (b * T_ + T_ - 1) * n, n * sizeof(T));
  std::vector<T> ones_(n, T(1));
  const T* ones = ones_.data();
  for (int64_t t = T_ - 1; t > 0; --t) {  // G_{t-1} = dH_{t-1} + (G_t M_t^T) * mask, grouped as step t
    Tiles tl = make_tiles(off.data() + t * (V + 1), V);
    const int64_t* sq = seqs.data() + t * B;
    at::parallel_for(0, (int64_t)tl.sym.size(), 1, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        const T* src[R]; T* out[R]; const T* base[R]; const T* pm[R];
        for (int r = 0; r < tl.rows[i]; ++r) {
          int64_t b = sq[tl.first[i] + r];
          src[r] = G + q[t * B + b] * NP;
          out[r] = G + q[(t - 1) * B + b] * NP;
          base[r] = dH + (b * T_ + t - 1) * n;
          pm[r] = mask ? mask + b * n : ones;
        }
        tile_rows<T, NV>(tl.rows[i], n, NP, Mtp + tl.sym[i] * n * NP, src, nullptr, out, base, pm);
      }
    });
  }
  at::parallel_for(0, V, 1, [&](int64_t lo, int64_t hi) {  // dM[v] = X_v^T G_v
    for (int64_t v = lo; v < hi; ++v)
      outer_all<T, NV>(cnt[v + 1] - cnt[v], n, NP, X + cnt[v] * n, G + cnt[v] * NP, dM + v * n * n);
  });
}

static int64_t vectors(int64_t n, int64_t W) {  // vectors per column block (1, 2 or 4): least padding
  int64_t best = 1, width = 0;
  for (int64_t nv : {1, 2, 4}) {
    if (nv > MAX_NV) break;
    const int64_t np = (n + nv * W - 1) / (nv * W) * nv * W;
    if (width == 0 || np <= width) best = nv, width = np;
  }
  return best;
}

template <typename T>
static const T* padded(const torch::Tensor& M_, int64_t NP, int slot) {  // (V, n, NP), zero beyond n
  const torch::Tensor M = M_.contiguous();
  const int64_t V = M.size(0), n = M.size(1);
  T* P = scratch<T>(slot, V * n * NP);
  const T* m = M.data_ptr<T>();
  at::parallel_for(0, V * n, 256, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      std::memcpy(P + r * NP, m + r * n, n * sizeof(T));
      std::fill(P + r * NP + n, P + (r + 1) * NP, T(0));
    }
  });
  return P;
}

// P[c] = W[word[c, 0]] W[word[c, 1]] ... W[word[c, S - 1]] for every chunk c (parallel over chunks)
template <typename T, int NV>
static void chunks_impl(const T* Wp, int64_t NP, const int64_t* word, T* P, int64_t N, int64_t S,
                        int64_t n) {
  at::parallel_for(0, N, 1, [&](int64_t lo, int64_t hi) {
    std::vector<T> a(n * NP), b(n * NP);
    for (int64_t c = lo; c < hi; ++c) {
      const int64_t* w = word + c * S;
      std::memcpy(a.data(), Wp + w[0] * n * NP, n * NP * sizeof(T));
      for (int64_t j = 1; j < S; ++j) {
        const T* Mp = Wp + w[j] * n * NP;
        for (int64_t i = 0; i < n; i += R) {
          const int rows = (int)std::min<int64_t>(R, n - i);
          const T* src[R]; T* out[R];
          for (int r = 0; r < rows; ++r) {
            src[r] = a.data() + (i + r) * NP;
            out[r] = b.data() + (i + r) * NP;
          }
          tile_rows<T, NV>(rows, n, NP, Mp, src, nullptr, out, nullptr, nullptr);
        }
        std::swap(a, b);
      }
      for (int64_t i = 0; i < n; ++i) std::memcpy(P + (c * n + i) * n, a.data() + i * NP, n * sizeof(T));
    }
  });
}

#define DISPATCH_NV(NV, ...) \
  switch (NV) { \
    case 1: { constexpr int NVC = 1; __VA_ARGS__; break; } \
    case 2: { constexpr int NVC = 2; __VA_ARGS__; break; } \
    default: { constexpr int NVC = 4; __VA_ARGS__; break; } \
  }

torch::Tensor scan_forward(torch::Tensor M, torch::Tensor h0, torch::Tensor tokens,
                           c10::optional<torch::Tensor> mask) {
  M = M.contiguous(); h0 = h0.contiguous(); tokens = tokens.contiguous();
  const int64_t V = M.size(0), n = M.size(1), B = tokens.size(0), T_ = tokens.size(1);
  auto H = torch::empty({B, T_, n}, M.options());
  torch::Tensor mk = mask.has_value() ? mask->contiguous() : torch::Tensor();
  AT_DISPATCH_FLOATING_TYPES(M.scalar_type(), "scan_forward", [&] {
    const int64_t W = VB / sizeof(scalar_t), NV = vectors(n, W);
    const int64_t NP = ((n + NV * W - 1) / (NV * W)) * NV * W;
    const scalar_t* Mp = padded<scalar_t>(M, NP, 0);
    DISPATCH_NV(NV, forward_impl<scalar_t, NVC>(
        Mp, NP, h0.data_ptr<scalar_t>(), h0.dim() == 2,
        tokens.data_ptr<int64_t>(), mk.defined() ? mk.data_ptr<scalar_t>() : nullptr,
        H.data_ptr<scalar_t>(), B, T_, V, n));
  });
  return H;
}

torch::Tensor scan_backward(torch::Tensor M, torch::Tensor h0, torch::Tensor tokens,
                            c10::optional<torch::Tensor> mask, torch::Tensor H, torch::Tensor dH) {
  M = M.contiguous(); h0 = h0.contiguous(); tokens = tokens.contiguous();
  H = H.contiguous(); dH = dH.contiguous();
  const int64_t V = M.size(0), n = M.size(1), B = tokens.size(0), T_ = tokens.size(1);
  auto dM = torch::zeros_like(M);
  torch::Tensor mk = mask.has_value() ? mask->contiguous() : torch::Tensor();
  AT_DISPATCH_FLOATING_TYPES(M.scalar_type(), "scan_backward", [&] {
    const int64_t W = VB / sizeof(scalar_t), NV = vectors(n, W);
    const int64_t NP = ((n + NV * W - 1) / (NV * W)) * NV * W;
    const scalar_t* Mtp = padded<scalar_t>(M.transpose(1, 2), NP, 1);
    scalar_t* G = scratch<scalar_t>(2, T_ * B * NP);  // beyond column n: never read into dM
    scalar_t* X = scratch<scalar_t>(0, T_ * B * n);
    DISPATCH_NV(NV, backward_impl<scalar_t, NVC>(
        Mtp, NP, h0.data_ptr<scalar_t>(), h0.dim() == 2,
        tokens.data_ptr<int64_t>(), mk.defined() ? mk.data_ptr<scalar_t>() : nullptr,
        H.data_ptr<scalar_t>(), dH.data_ptr<scalar_t>(), G, X,
        dM.data_ptr<scalar_t>(), B, T_, V, n));
  });
  return dM;
}

torch::Tensor chunk_products(torch::Tensor W, torch::Tensor word) {
  W = W.contiguous(); word = word.contiguous();
  const int64_t n = W.size(1), N = word.size(0), S = word.size(1);
  TORCH_CHECK(S >= 1, "chunk_products: empty chunks");
  auto P = torch::empty({N, n, n}, W.options());
  AT_DISPATCH_FLOATING_TYPES(W.scalar_type(), "chunk_products", [&] {
    const int64_t Wn = W.size(0), NW = VB / sizeof(scalar_t), NV = vectors(n, NW);
    const int64_t NP = ((n + NV * NW - 1) / (NV * NW)) * NV * NW;
    const int64_t* wd = word.data_ptr<int64_t>();
    for (int64_t i = 0; i < N * S; ++i)
      TORCH_CHECK(wd[i] >= 0 && wd[i] < Wn, "chunk_products: word ", wd[i], " outside [0, ", Wn, ")");
    const scalar_t* Wp = padded<scalar_t>(W, NP, 3);
    DISPATCH_NV(NV, chunks_impl<scalar_t, NVC>(Wp, NP, wd, P.data_ptr<scalar_t>(), N, S, n));
  });
  return P;
}

int64_t vector_bytes() { return VB; }  // the build's vector: 64 bytes (AVX-512) or 32 (AVX2 and others)
