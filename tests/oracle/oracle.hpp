// symlayout's CuTe C++ oracle (tests/oracle/): the verdicts of one configuration computed from the real
// CuTe objects. Host only (g++ -std=c++17). Written for symlayout; the generator (tests/oracle/cute_oracle.py)
// emits one `case_N()` function per configuration after this header.
//
// What comes from CuTe: make_tiled_mma, make_tiled_copy_A/B/C, partition_S/D, partition_fragment_A/B/C,
// retile_S/D, partition_A/B/C of an identity tensor (the element each MMA slot expects), the smem layout's
// own evaluation (swizzle and offset included), and the real cute::copy dispatch. The dispatch is captured
// by a recording copy op `Rec<Op>` whose Copy_Traits are Op's (so CuTe's static_asserts and its call plan are
// unchanged); AutoVectorizingCopyWithAssumedAlignment<N> (no atom call: CuTe copies element-wise after its
// own vectorisation) is captured at the element-wise `copy_if(constant_fn<true_type>, src, dst)` it ends in.
//
// What is written here, independently of CuTe and of symlayout (symlayout/arch/ptx.py is not used): the
// PTX ISA data routes of ldmatrix / stmatrix (.x1/.x2/.x4, .trans, m8n8 b16) and of per-thread vector
// copies, and the shared-memory bank model (32 banks of 4 bytes; one phase per 8x8 matrix for ldmatrix /
// stmatrix, per 128 bytes of lanes for vector accesses).
#pragma once
#include <cute/tensor.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cute/atom/copy_atom.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace oracle {

// One register a copy-op call names: byte offset from its region's base (smem tile or the thread's fragment).
struct Reg { long addr; int bytes; };
struct CallRec { std::vector<Reg> src, dst; };

inline std::vector<CallRec>* g_calls = nullptr;
inline char const* g_src_base = nullptr;
inline char const* g_dst_base = nullptr;

// Recording op: Op's registers and Copy_Traits, a copy() that records what it is given.
template <class Op>
struct Rec : Op {
  template <class... A>
  static void copy(A&&... a) {
    using SR = typename Op::SRegisters;
    using DR = typename Op::DRegisters;
    constexpr int NS = int(std::extent<SR>::value);
    constexpr int SB = int(sizeof(std::remove_extent_t<SR>));
    constexpr int DB = int(sizeof(std::remove_extent_t<DR>));
    void const* p[] = {static_cast<void const*>(&a)...};
    CallRec c;
    for (int i = 0; i < int(sizeof...(A)); ++i) {
      char const* q = static_cast<char const*>(p[i]);
      if (i < NS) c.src.push_back({long(q - g_src_base), SB});
      else        c.dst.push_back({long(q - g_dst_base), DB});
    }
    if (g_calls) g_calls->push_back(c);
  }
};

}  // namespace oracle

namespace cute {
template <class Op>
struct Copy_Traits<oracle::Rec<Op>> : Copy_Traits<Op> {};

// AutoVectorizingCopyWithAssumedAlignment<N>: CuTe's copy() vectorises (max_common_vector, assumed
// alignment) and ends in copy_if(constant_fn<true_type>{}, src_v, dst_v); this more specialised overload
// (found by ADL at instantiation) records each element-wise move of that loop instead of performing it.
template <class SE, class SL, class DE, class DL>
CUTE_HOST_DEVICE void copy_if(constant_fn<true_type> const&, Tensor<SE, SL> const& src, Tensor<DE, DL>& dst) {
  using ST = typename SE::value_type;
  using DT = typename DE::value_type;
  for (int i = 0; i < int(size(dst)); ++i) {
    oracle::CallRec c;
    c.src.push_back({long(reinterpret_cast<char const*>(&src(i)) - oracle::g_src_base), int(sizeof(ST))});
    c.dst.push_back({long(reinterpret_cast<char const*>(&dst(i)) - oracle::g_dst_base), int(sizeof(DT))});
    if (oracle::g_calls) oracle::g_calls->push_back(c);
  }
}
}  // namespace cute

namespace oracle {
using namespace cute;

enum Kind { LDSM = 0, STSM = 1, VEC = 2 };

struct Out {
  std::string id;
  std::map<std::string, std::string> status, detail;
  int bank_degree = 1;
  long checks = 0;
  void fail(char const* prop, std::string const& why) {
    if (status[prop] != "refuted") { status[prop] = "refuted"; detail[prop] = why; }
  }
  static std::string esc(std::string const& s) {
    std::string o;
    for (char ch : s) { if (ch == '"' || ch == '\\') o += '\\'; o += ch; }
    return o;
  }
  void print() const {
    std::printf("VERDICT {\"id\": \"%s\", \"bank_degree\": %d, \"checks\": %ld", id.c_str(), bank_degree, checks);
    for (auto const& kv : status) std::printf(", \"%s\": \"%s\"", kv.first.c_str(), kv.second.c_str());
    std::printf(", \"detail\": {");
    bool first = true;
    for (auto const& kv : detail) {
      std::printf("%s\"%s\": \"%s\"", first ? "" : ", ", kv.first.c_str(), esc(kv.second).c_str());
      first = false;
    }
    std::printf("}}\n");
    std::fflush(stdout);
  }
};

inline std::string fmt(char const* f, long a = 0, long b = 0, long c = 0, long d = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b, c, d);
  return buf;
}

template <int Op, class ThrMma, class Tensor>
auto partition_operand(ThrMma const& thr, Tensor&& t) {
  if constexpr (Op == 0) return thr.partition_A(t);
  else if constexpr (Op == 1) return thr.partition_B(t);
  else return thr.partition_C(t);
}

template <int Op, class ThrMma, class Tensor>
auto fragment_operand(ThrMma const& thr, Tensor&& t) {
  if constexpr (Op == 0) return thr.partition_fragment_A(t);
  else if constexpr (Op == 1) return thr.partition_fragment_B(t);
  else return thr.partition_fragment_C(t);
}

template <int Op, class CopyAtom, class Mma>
auto tiled_copy_operand(CopyAtom const& atom, Mma const& mma) {
  if constexpr (Op == 0) return make_tiled_copy_A(atom, mma);
  else if constexpr (Op == 1) return make_tiled_copy_B(atom, mma);
  else return make_tiled_copy_C(atom, mma);
}

// One byte moved by the hardware: from byte `from` of the source region to byte `to` of the destination;
// or (fb, tb > 0) one element of fb bytes converted into one of tb bytes (CuTe's element-wise copy).
struct Move { long from, to; int fb = 0, tb = 0; };
// One dereferenced smem vector (an ldmatrix/stmatrix row, or a vector access) of an instruction phase.
struct Access { int warp, call, phase; long addr; int bytes; int lane; };

// The PTX data route of one warp-collective issue (call index `c` of warp `w`): which smem bytes are
// dereferenced, and which byte goes where. Loads: from = smem byte, to = fragment byte of `thread`.
// Stores: from = fragment byte of `thread`, to = smem byte.
struct Route { std::vector<Access> acc; std::vector<std::pair<int, Move>> moves; /* (thread, move) */ };

// ldmatrix / stmatrix m8n8 b16 with `num` matrices: matrix j's row r address comes from lane 8j+r (the
// only lanes whose addresses are used); lane l's register j holds row l/4, b16 columns 2(l%4), 2(l%4)+1 of
// matrix j (non-transposed), or row 2(l%4)+h, column l/4 for its half h (.trans).
inline void matrix_route(bool store, bool trans, int num, int w, int c, std::vector<std::vector<CallRec>> const& calls,
                         int nthr, Route& R, std::string& err) {
  auto lane_call = [&](int l) -> CallRec const* { int t = 32 * w + l; return t < nthr ? &calls[t][c] : nullptr; };
  long row[4][8];
  for (int j = 0; j < num; ++j)
    for (int r = 0; r < 8; ++r) {
      CallRec const* cr = lane_call(8 * j + r);
      if (!cr) { err = fmt("warp %ld: lane %ld of a %ld-matrix instruction has no thread", w, 8 * j + r, num); return; }
      auto const& regs = store ? cr->dst : cr->src;
      if (regs.size() != 1 || regs[0].bytes != 16) { err = "smem side is not one 16-byte row per lane"; return; }
      row[j][r] = regs[0].addr;
      R.acc.push_back({w, c, j, row[j][r], 16, 8 * j + r});
    }
  for (int l = 0; l < 32; ++l) {
    CallRec const* cr = lane_call(l);
    if (!cr) continue;
    auto const& regs = store ? cr->src : cr->dst;
    if (int(regs.size()) != num) { err = "register side does not have one 32-bit register per matrix"; return; }
    for (int j = 0; j < num; ++j) {
      if (regs[j].bytes != 4) { err = "register side is not 32-bit"; return; }
      for (int b = 0; b < 4; ++b) {
        long smem = trans ? row[j][2 * (l % 4) + b / 2] + 2 * (l / 4) + b % 2
                          : row[j][l / 4] + 4 * (l % 4) + b;
        long reg = regs[j].addr + b;
        R.moves.push_back({32 * w + l, store ? Move{reg, smem} : Move{smem, reg}});
      }
    }
  }
}

// Per-thread vector copies: each thread moves its own registers; register k of the source is copied
// byte for byte into register k of the destination; the smem-side register is one access of its width.
// Phases: the lanes whose accesses add up to 128 bytes (8 lanes of 16 B, 16 of 8 B, 32 of <= 4 B).
inline void vector_route(bool store, int w, int c, std::vector<std::vector<CallRec>> const& calls, int nthr, Route& R,
                         std::string& err) {
  for (int l = 0; l < 32; ++l) {
    int t = 32 * w + l;
    if (t >= nthr) break;
    CallRec const& cr = calls[t][c];
    if (cr.src.size() != cr.dst.size()) { err = "vector copy with unequal register counts"; return; }
    for (size_t k = 0; k < cr.src.size(); ++k) {
      Reg const& sm = store ? cr.dst[k] : cr.src[k];
      int bytes = sm.bytes;
      int per_phase = bytes >= 4 ? 128 / bytes : 32;
      R.acc.push_back({w, int(c * 64 + k), l / per_phase, sm.addr, bytes, l});
      if (cr.src[k].bytes != cr.dst[k].bytes)          // an element-wise converting copy of one element
        R.moves.push_back({t, Move{cr.src[k].addr, cr.dst[k].addr, cr.src[k].bytes, cr.dst[k].bytes}});
      else
        for (int b = 0; b < bytes; ++b) R.moves.push_back({t, Move{cr.src[k].addr + b, cr.dst[k].addr + b}});
    }
  }
}

inline long floordiv(long a, long b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// ---------------------------------------------------------------------------------------------------------
// The verdicts of one configuration: operand Op (0 = A, 1 = B loads smem -> fragment; 2 = C stores fragment
// -> smem), copy atom Copy_Atom<CopyOp, T>, value types, smem layout, base alignment in bytes.
template <int Op, class CopyOp, class T, int K, int NUM, bool TRANS, class Mma, class SLayout>
void run_case(char const* id, Mma const& mma, SLayout const& slayout, long align) {
  Out o;
  o.id = id;
  for (char const* p : {"coverage", "alignment", "exactly_once", "slot_agreement", "bank_conflicts", "in_bounds",
                        "type_agreement"})
    o.status[p] = "proved";
  bool const store = Op == 2;
  constexpr long TB = long(sizeof(T));
  long const cos = long(cosize(slayout));
  long const smem_bytes = cos * TB;
  int const nthr = int(size(mma));

  static char buffer[1 << 22];
  long const guard = 1 << 20;
  T* base = reinterpret_cast<T*>(buffer + guard);
  auto sX = make_tensor(make_smem_ptr(base), slayout);
  auto coords = make_identity_tensor(shape(slayout));
  auto tiled_copy = tiled_copy_operand<Op>(Copy_Atom<CopyOp, T>{}, mma);

  // the element (byte address, in the smem tile) at each coordinate: the layout's own value
  auto elem_addr = [&](auto const& crd) { return long(slayout(crd)) * TB; };
  // linear index of a coordinate in the (M,K|N) tile
  long const rows = long(size<0>(slayout)), ncols = long(size(slayout)) / rows;
  auto lin = [&](auto const& crd) { return long(crd2idx(crd, shape(slayout))); };

  // ---- MMA ownership of the tile (part of coverage): each element owned `rep` times, never twice by a thread
  {
    auto vmnk = mma.get_thr_layout_vmnk();
    int rep = Op == 0 ? int(size<2>(vmnk)) : Op == 1 ? int(size<1>(vmnk)) : int(size<3>(vmnk));
    std::vector<int> own(rows * ncols, 0);
    for (int t = 0; t < nthr; ++t) {
      auto p = partition_operand<Op>(mma.get_slice(t), coords);
      std::set<long> mine;
      for (int i = 0; i < int(size(p)); ++i) {
        long e = lin(p(i));
        ++o.checks;
        if (!mine.insert(e).second) o.fail("coverage", fmt("thread %ld holds tile element %ld twice", t, e));
        ++own[e];
      }
    }
    for (long e = 0; e < rows * ncols; ++e)
      if (own[e] != rep) o.fail("coverage", fmt("tile element %ld (colex index) owned %ld times by the TiledMMA, expected %ld",
                                               e, own[e], rep));
  }

  // ---- run cute::copy for every thread, recording the atom calls
  std::vector<std::vector<CallRec>> calls(nthr);
  std::vector<long> frag_bytes(nthr);
  using FragT = typename decltype(fragment_operand<Op>(mma.get_slice(0), sX))::value_type;
  constexpr long FB = long(sizeof(FragT));
  // per thread: fragment storage byte -> expected smem byte address of that slot's element (-1: none)
  std::vector<std::vector<long>> expect(nthr);
  for (int t = 0; t < nthr; ++t) {
    auto thr_mma = mma.get_slice(t);
    auto thr_copy = tiled_copy.get_slice(t);
    auto frag = fragment_operand<Op>(thr_mma, sX);
    char const* fbase = reinterpret_cast<char const*>(raw_pointer_cast(frag.data()));
    frag_bytes[t] = long(cosize(frag.layout())) * FB;
    auto want = partition_operand<Op>(thr_mma, coords);
    expect[t].assign(frag_bytes[t], -1);
    for (int i = 0; i < int(size(frag)); ++i) {
      long s = long(frag.layout()(i)) * FB;
      long e = elem_addr(want(i));
      for (long b = 0; b < FB; ++b) expect[t][s + b] = b < TB ? e + b : -2;   // -2: slot wider than T
    }
    g_calls = &calls[t];
    if constexpr (!store) {
      // A and B one k-block at a time, as CuTe's cooperative GEMM and the SM80 kernels copy them (the
      // same atom calls as one copy() of the whole tensor; AutoVectorizingCopy vectorises per k-block)
      auto src = thr_copy.partition_S(sX);
      auto dst = thr_copy.retile_D(frag);
      g_src_base = reinterpret_cast<char const*>(base);
      g_dst_base = fbase;
      for (int k = 0; k < int(size<2>(dst)); ++k) {
        auto s_k = src(_, _, k);
        auto d_k = dst(_, _, k);
        copy(tiled_copy, s_k, d_k);
      }
    } else {
      auto src = thr_copy.retile_S(frag);
      auto dst = thr_copy.partition_D(sX);
      g_src_base = fbase;
      g_dst_base = reinterpret_cast<char const*>(base);
      copy(tiled_copy, src, dst);
    }
    g_calls = nullptr;
  }
  size_t ncalls = calls[0].size();
  for (int t = 1; t < nthr; ++t)
    if (calls[t].size() != ncalls) { o.status["error"] = "threads make different numbers of calls"; o.print(); return; }

  // ---- the hardware route of every warp-collective issue
  std::vector<Access> acc;
  std::vector<std::pair<int, Move>> moves;
  for (int w = 0; w * 32 < nthr; ++w)
    for (size_t c = 0; c < ncalls; ++c) {
      Route R;
      std::string err;
      if (K == VEC) vector_route(store, w, int(c), calls, nthr, R, err);
      else matrix_route(store, TRANS, NUM, w, int(c), calls, nthr, R, err);
      if (!err.empty()) { o.status["error"] = err; o.print(); return; }
      acc.insert(acc.end(), R.acc.begin(), R.acc.end());
      moves.insert(moves.end(), R.moves.begin(), R.moves.end());
    }

  // ---- alignment, in_bounds (every dereferenced smem vector)
  for (auto const& a : acc) {
    ++o.checks;
    if (((a.addr % a.bytes) + a.bytes) % a.bytes != 0 || align % a.bytes != 0)
      o.fail("alignment", fmt("lane %ld (warp %ld) dereferences %ld bytes at byte %ld, not aligned", a.lane, a.warp,
                              a.bytes, a.addr));
    if (a.addr < 0 || a.addr + a.bytes > smem_bytes)
      o.fail("in_bounds", fmt("lane %ld (warp %ld) dereferences bytes [%ld, +%ld) outside the tile", a.lane, a.warp,
                              a.addr, a.bytes));
  }

  // ---- bank conflicts: per phase, the most distinct 4-byte words one bank serves
  {
    std::map<std::tuple<int, int, int>, std::map<int, std::set<long>>> ph;
    for (auto const& a : acc) {
      auto& banks = ph[{a.warp, a.call, a.phase}];
      for (long wd = floordiv(a.addr, 4); wd <= floordiv(a.addr + a.bytes - 1, 4); ++wd)
        banks[int(((wd % 32) + 32) % 32)].insert(wd);
    }
    for (auto const& kv : ph)
      for (auto const& b : kv.second) o.bank_degree = std::max(o.bank_degree, int(b.second.size()));
    if (o.bank_degree > 1) o.fail("bank_conflicts", fmt("%ld-way bank conflict", o.bank_degree));
  }

  // ---- tile element bytes
  std::set<long> tile_bytes;
  for (int i = 0; i < int(size(coords)); ++i) {
    long e = elem_addr(coords(i));
    for (long b = 0; b < TB; ++b) tile_bytes.insert(e + b);
  }

  if (!store) {
    // coverage: every tile byte is read by a dereferenced row/vector
    std::set<long> read;
    for (auto const& a : acc) for (long b = 0; b < a.bytes; ++b) read.insert(a.addr + b);
    for (long b : tile_bytes) if (!read.count(b)) { o.fail("coverage", fmt("smem byte %ld is never read", b)); break; }
    // exactly_once: every fragment byte written exactly once, nothing written outside the fragment
    std::vector<std::vector<int>> cnt(nthr);
    for (int t = 0; t < nthr; ++t) cnt[t].assign(frag_bytes[t], 0);
    for (auto const& tm : moves) {
      int t = tm.first;
      for (long to = tm.second.to; to < tm.second.to + std::max(1, tm.second.tb); ++to) {
        if (to < 0 || to >= frag_bytes[t]) { o.fail("exactly_once", fmt("thread %ld: byte written outside its fragment (%ld)", t, to)); continue; }
        ++cnt[t][to];
      }
    }
    for (int t = 0; t < nthr; ++t)
      for (long b = 0; b < frag_bytes[t]; ++b) {
        ++o.checks;
        if (cnt[t][b] != 1) { o.fail("exactly_once", fmt("thread %ld fragment byte %ld written %ld times", t, b, cnt[t][b])); break; }
      }
    // slot_agreement: every byte moved into a fragment slot is the byte of the element the MMA expects there
    for (auto const& tm : moves) {
      int t = tm.first; long to = tm.second.to;
      if (to < 0 || to >= frag_bytes[t]) continue;
      ++o.checks;
      bool conv = tm.second.tb > 0;                 // a converted element must land on a whole slot
      if (conv ? (to % FB != 0 || tm.second.tb != FB || tm.second.fb != TB || expect[t][to] != tm.second.from)
               : expect[t][to] != tm.second.from)
        o.fail("slot_agreement", fmt("thread %ld fragment byte %ld receives smem byte %ld, the MMA expects %ld", t, to,
                                     tm.second.from, expect[t][to]));
    }
  } else {
    // coverage: every tile byte written; exactly_once: each tile byte written once
    std::map<long, int> wr;
    for (auto const& tm : moves)
      for (long b = 0; b < std::max(1, tm.second.tb); ++b) ++wr[tm.second.to + b];
    for (long b : tile_bytes) {
      ++o.checks;
      auto it = wr.find(b);
      int n = it == wr.end() ? 0 : it->second;
      if (n == 0) o.fail("coverage", fmt("smem byte %ld is never written", b));
      if (n != 1) o.fail("exactly_once", fmt("smem byte %ld written %ld times", b, n));
    }
    // slot_agreement: every fragment byte stored goes to the byte of the element the MMA holds in that slot
    for (auto const& tm : moves) {
      int t = tm.first; long from = tm.second.from;
      ++o.checks;
      if (from < 0 || from >= frag_bytes[t]) { o.fail("slot_agreement", fmt("thread %ld stores byte %ld outside its fragment", t, from)); continue; }
      bool conv = tm.second.fb > 0;                 // a converted element must come from a whole slot
      if (conv ? (from % FB != 0 || tm.second.fb != FB || tm.second.tb != TB || expect[t][from] != tm.second.to)
               : expect[t][from] != tm.second.to)
        o.fail("slot_agreement", fmt("thread %ld fragment byte %ld is stored to smem byte %ld, its element is at %ld", t,
                                     from, tm.second.to, expect[t][from]));
    }
  }
  using VX = std::conditional_t<Op == 0, typename Mma::ValTypeA,
                                std::conditional_t<Op == 1, typename Mma::ValTypeB, typename Mma::ValTypeC>>;
  // the hardware reads exactly VX; the one reinterpretation it defines: float storage for tf32 operands
  constexpr bool type_ok = std::is_same_v<T, VX> || (std::is_same_v<T, float> && std::is_same_v<VX, tfloat32_t>);
  if (!type_ok) o.fail("type_agreement", "the copy's value type is not the type the MMA reads for this operand");
  o.print();
}

}  // namespace oracle
