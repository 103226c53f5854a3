// symlayout's CuTe C++ oracle for the global-memory copies of the data path ([g2s.X], [s2g.C], stages;
// issue 14). Host only (g++ -std=c++17). Written for symlayout; tests/oracle/datapath_oracle.py emits one
// `case_N()` function per configuration after this header.
//
// From CuTe (nothing re-implemented): make_tiled_copy / make_tiled_copy_impl, partition_S/D of the gmem
// tile (a run-time leading dimension) and of the smem tile (every stage: the stage's slice of the staged
// layout, swizzle and offset included), the real cute::copy dispatch for every thread, and the predicated
// copy_if of a partial tile (the predicate tensor built as CUTLASS's SM80 mainloop builds it, from
// partition_S of an identity tensor; CuTe's Copy_Atom::call executes an instruction when the predicate of
// its first value is true). Every atom call is captured by oracle::Rec<Op> (oracle.hpp): the byte address
// of each register it is handed; the auto-vectorizing copies by oracle.hpp's copy_if overload.
//
// Written here, from the PTX ISA and the CUDA memory model, independently of symlayout: one register of a
// call moves its bytes from its source address to its destination address; shared-memory banks (32 banks of
// 4 bytes; 16-byte accesses are served per 8 lanes, 8-byte per 16, narrower per 32; the degree is the
// most distinct words one bank serves in a phase over the minimum); 32-byte global sectors per warp
// instruction (the tile's first byte on a sector boundary, as the contract states).
#pragma once
#include "oracle.hpp"

#include <cmath>
#include <unordered_map>

namespace dpo {
using namespace cute;

struct Move { int t, c; long g, s; int n; };   // thread, access index, gmem byte, smem byte, bytes

struct Verdicts {
  std::map<std::string, std::string> status, detail;
  double worst = 1.0;
  void fail(std::string const& p, std::string const& why) {
    if (status[p] != "refuted") { status[p] = "refuted"; detail[p] = why; }
  }
  void init(std::initializer_list<char const*> props) { for (auto p : props) status[p] = "proved"; }
};

inline std::string fmt(char const* f, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0) {
  char buf[320];
  std::snprintf(buf, sizeof buf, f, a, b, c, d, e);
  return buf;
}

// The moves of one thread's copy: every (source register, destination register) pair of every atom call.
template <bool G2S>
void collect(std::vector<oracle::CallRec> const& calls, int t, std::vector<Move>& out) {
  int c = 0;
  for (auto const& cr : calls)
    for (size_t r = 0; r < cr.src.size() && r < cr.dst.size(); ++r, ++c) {
      auto const& gr = G2S ? cr.src[r] : cr.dst[r];
      auto const& sr = G2S ? cr.dst[r] : cr.src[r];
      out.push_back({t, c, gr.addr, sr.addr, std::min(gr.bytes, sr.bytes)});
    }
}

// Every thread's copy of gX <-> sX, unpredicated (rm < 0) or predicated on the residue (rm, rn).
template <bool G2S, int M, int N, class TC, class GX, class SX>
std::vector<Move> record(TC const& tc, GX const& gX, SX const& sX, char const* gbase, char const* sbase,
                         int rm, int rn) {
  std::vector<Move> out;
  auto cI = make_identity_tensor(make_shape(Int<M>{}, Int<N>{}));
  for (int t = 0; t < int(size(tc)); ++t) {
    auto thr = tc.get_slice(t);
    std::vector<oracle::CallRec> calls;
    oracle::g_calls = &calls;
    oracle::g_src_base = G2S ? gbase : sbase;
    oracle::g_dst_base = G2S ? sbase : gbase;
    if constexpr (G2S) {
      auto src = thr.partition_S(gX);
      auto dst = thr.partition_D(sX);
      if (rm < 0) copy(tc, src, dst);
      else {
        auto tI = thr.partition_S(cI);
        auto prd = make_tensor<bool>(shape(tI));
        for (int i = 0; i < int(size(tI)); ++i) prd(i) = get<0>(tI(i)) < rm && get<1>(tI(i)) < rn;
        copy_if(tc, prd, src, dst);
      }
    } else {
      auto src = thr.partition_S(sX);
      auto dst = thr.partition_D(gX);
      if (rm < 0) copy(tc, src, dst);
      else {
        auto tI = thr.partition_D(cI);
        auto prd = make_tensor<bool>(shape(tI));
        for (int i = 0; i < int(size(tI)); ++i) prd(i) = get<0>(tI(i)) < rm && get<1>(tI(i)) < rn;
        copy_if(tc, prd, src, dst);
      }
    }
    oracle::g_calls = nullptr;
    collect<G2S>(calls, t, out);
  }
  return out;
}

// gmem byte -> the tile elements (row + M * column) it belongs to (rows may overlap): built once per
// leading dimension.
struct GIndex {
  std::vector<long> one;                                   // byte -> element, -1: none, -2: several
  std::unordered_map<long, std::vector<long>> many;
  GIndex(std::vector<long> const& gA, int EB) {
    long hi = 0;
    for (long a : gA) hi = std::max(hi, (a + 1) * EB);
    one.assign(size_t(hi) + 1, -1);
    for (long i = 0; i < long(gA.size()); ++i)
      for (int b = 0; b < EB; ++b) {
        long x = gA[i] * EB + b;
        if (one[x] == -1) { one[x] = i; continue; }
        if (one[x] >= 0) { many[x].push_back(one[x]); one[x] = -2; }
        many[x].push_back(i);
      }
  }
  template <class F> bool any(long x, F const& f) const {
    if (x < 0 || x >= long(one.size()) || one[x] == -1) return false;
    if (one[x] >= 0) return f(one[x]);
    for (long i : many.at(x)) if (f(i)) return true;
    return false;
  }
};

// The verdicts of one run (one leading dimension, one stage): moves `mv`; element byte addresses
// gA[i], sA[i] (gmem, smem of this stage), cA[i] (where the [copy.X] table reads/writes element i);
// the smem bytes of this stage [slo, shi); base alignments.
template <bool G2S>
void check(Verdicts& v, std::vector<Move> const& mv, int EB, int M, std::vector<long> const& gA,
           std::vector<long> const& sA, std::vector<long> const& cA, long slo, long shi, long galign,
           long salign, std::string const& at, GIndex const& gi) {
  long const n_el = long(gA.size());
  std::unordered_map<long, long> sel;                 // smem byte -> element * EB + byte
  for (long i = 0; i < n_el; ++i)
    for (int b = 0; b < EB; ++b) sel.emplace(sA[i] * EB + b, i * EB + b);
  auto name = [&](long i) { return fmt("(%ld,%ld)", i % M, i / M); };
  std::unordered_map<long, int> written;              // destination byte -> times
  for (auto const& m : mv) for (int j = 0; j < m.n; ++j) written[(G2S ? m.s : m.g) + j]++;
  // coverage, exactly_once: the destination bytes of every tile element
  for (long i = 0; i < n_el; ++i)
    for (int b = 0; b < EB; ++b) {
      long d = (G2S ? sA[i] : gA[i]) * EB + b;
      auto it = written.find(d);
      int k = it == written.end() ? 0 : it->second;
      if (k == 0) v.fail("coverage", "element " + name(i) + " byte " + std::to_string(b) + " never written" + at);
      if (k != 1) v.fail("exactly_once", "element " + name(i) + " byte " + std::to_string(b) + " written " +
                                             std::to_string(k) + " times" + at);
    }
  // alignment: every register's addresses aligned to its width on both sides, and the bases
  for (auto const& m : mv) {
    if (galign % m.n || m.g % m.n) v.fail("alignment", fmt("thread %ld access %ld: gmem byte %ld (base %ld) not %ld-byte aligned", m.t, m.c, m.g, galign, m.n) + at);
    if (salign % m.n || m.s % m.n) v.fail("alignment", fmt("thread %ld access %ld: smem byte %ld (base %ld) not %ld-byte aligned", m.t, m.c, m.s, salign, m.n) + at);
  }
  // in_bounds (unpredicated): smem bytes inside this stage, gmem bytes inside the tile
  for (auto const& m : mv)
    for (int j = 0; j < m.n; ++j) {
      if (m.s + j < slo || m.s + j >= shi) v.fail("in_bounds", fmt("thread %ld access %ld: smem byte %ld outside [%ld, %ld)", m.t, m.c, m.s + j, slo, shi) + at);
      if (!gi.any(m.g + j, [](long) { return true; })) v.fail("in_bounds", fmt("thread %ld access %ld: gmem byte %ld is no tile element's", m.t, m.c, m.g + j) + at);
    }
  // slot_agreement: each smem byte moved is byte b of element i, and its gmem byte is byte b of element i
  for (auto const& m : mv)
    for (int j = 0; j < m.n; ++j) {
      auto si = sel.find(m.s + j);
      bool ok = false;
      if (si != sel.end()) {
        long want = si->second;
        ok = gi.any(m.g + j, [&](long i) { return i * EB + (m.g + j - gA[i] * EB) == want; });
      }
      if (!ok) v.fail("slot_agreement", fmt("thread %ld access %ld: smem byte %ld <-> gmem byte %ld are not the same element's byte", m.t, m.c, m.s + j, m.g + j) + at);
    }
  for (long i = 0; i < n_el; ++i)
    if (cA[i] != sA[i]) v.fail("slot_agreement", "element " + name(i) + fmt(": the copy table's smem address %ld differs from the global copy's %ld", cA[i], sA[i]) + at);
  // per warp instruction: banks (smem side) and sectors (gmem side)
  std::map<std::pair<int, int>, std::vector<Move const*>> inst;
  for (auto const& m : mv) inst[{m.t / 32, m.c}].push_back(&m);
  for (auto const& kv : inst) {
    auto const& ms = kv.second;
    int nb = ms[0]->n;
    int per = nb > 4 ? 128 / nb : 32;
    std::map<int, std::vector<Move const*>> ph;
    for (auto p : ms) ph[(p->t % 32) / per].push_back(p);
    for (auto const& q : ph) {
      std::map<int, std::set<long>> banks;
      long bytes = 0;
      for (auto p : q.second) {
        bytes += p->n;
        for (long w = p->s / 4; w <= (p->s + p->n - 1) / 4; ++w) banks[int(w % 32)].insert(w);
      }
      size_t need = 0;
      for (auto const& b : banks) need = std::max(need, b.second.size());
      long minimum = std::max(1L, (bytes + 127) / 128);
      if (long(need) > minimum) {
        double r = double(need) / double(minimum);
        if (r > v.worst) v.worst = r;
        v.fail("bank_conflicts", fmt("warp %ld access %ld phase %ld: %ld wavefronts, minimum %ld", kv.first.first, kv.first.second, q.first, long(need), minimum) + at);
      }
    }
    std::set<long> sec, by;
    for (auto p : ms) for (int j = 0; j < p->n; ++j) { by.insert(p->g + j); sec.insert((p->g + j) >> 5); }
    long minimum = (long(by.size()) + 31) / 32;
    if (long(sec.size()) > minimum)
      v.fail("coalescing", fmt("warp %ld access %ld: %ld sectors for %ld bytes", kv.first.first, kv.first.second, long(sec.size()), long(by.size())) + at);
  }
}

// The residue runs: every instruction CuTe executes (the predicate of its first value true) moves only
// bytes of elements inside the problem (row < rm, column < rn).
template <int M>
void check_residue(Verdicts& v, std::vector<Move> const& mv, GIndex const& gi, int rm, int rn,
                   std::string const& at) {
  if (v.status["in_bounds"] == "refuted") return;          // the first reason is kept
  for (auto const& m : mv)
    for (int j = 0; j < m.n; ++j) {
      bool inside = gi.any(m.g + j, [&](long i) { return (i % M) < rm && (i / M) < rn; });
      if (!inside) {
        v.fail("in_bounds", fmt("residue (%ld,%ld): thread %ld access %ld moves gmem byte %ld outside the problem", rm, rn, m.t, m.c, m.g + j) + at);
        return;
      }
    }
}

// One configuration. SL: the smem layout (rank 2, or rank 3 with the PIPE mode); CL: the [copy.X] table's
// (same rank). MAJOR 0: gmem (M,N):(ld,1); 1: (M,N):(1,ld). resM/resN: the residues to check per mode
// (empty: none); lds: every admissible leading dimension.
template <bool G2S, int MAJOR, int M, int N, class T, class TC, class SL, class CL>
void run_global(char const* id, TC const& tc, SL const& sl, CL const& cl, std::vector<int> const& lds,
                long galign, long salign, std::vector<int> const& resM, std::vector<int> const& resN,
                bool first_pred = false) {
  Verdicts v;
  v.init({"coverage", "alignment", "exactly_once", "slot_agreement", "bank_conflicts", "in_bounds", "coalescing"});
  Verdicts st;
  st.init({"exactly_once"});
  constexpr int EB = int(sizeof(T));
  constexpr bool staged = decltype(rank(sl))::value == 3;
  int nst = 1;
  if constexpr (staged) nst = int(size<2>(sl));
  static T sbuf_storage[(1 << 18) / sizeof(T) + 64];
  T* sbuf = sbuf_storage;
  long const total = long(cosize(sl));
  if (total * EB > long(sizeof(sbuf_storage))) { std::printf("DPV {\"id\": \"%s\", \"error\": \"smem too big\"}\n", id); return; }
  auto sXall = make_tensor(make_smem_ptr(sbuf), sl);
  auto cXall = make_tensor(make_smem_ptr(sbuf), cl);
  std::vector<std::string> per_stage(nst, "");
  // stages: no byte of two stages
  std::unordered_map<long, int> owner;
  for (int s = 0; s < nst; ++s) {
    std::vector<std::string> fails;
    for (int n = 0; n < N; ++n)
      for (int m = 0; m < M; ++m) {
        long a;
        if constexpr (staged) a = long(&sXall(m, n, s) - sbuf); else a = long(&sXall(m, n) - sbuf);
        for (int b = 0; b < EB; ++b) {
          auto ins = owner.emplace(a * EB + b, s);
          if (!ins.second && ins.first->second != s)
            st.fail("exactly_once", fmt("smem byte %ld in stage %ld and stage %ld", a * EB + b, ins.first->second, s));
        }
      }
  }
  for (int ld : lds) {
    auto gL = [&] {
      if constexpr (MAJOR == 0) return make_layout(make_shape(Int<M>{}, Int<N>{}), make_stride(ld, Int<1>{}));
      else return make_layout(make_shape(Int<M>{}, Int<N>{}), make_stride(Int<1>{}, ld));
    }();
    std::vector<T> gbuf(size_t(cosize(gL)) + 64);
    auto gX = make_tensor(make_gmem_ptr(gbuf.data()), gL);
    std::vector<long> gA(M * N);
    for (int n = 0; n < N; ++n) for (int m = 0; m < M; ++m) gA[m + M * n] = long(&gX(m, n) - gbuf.data());
    GIndex gi(gA, EB);
    for (int s = 0; s < nst; ++s) {
      auto one = [&](auto const& sX, auto const& cX) {
        std::vector<long> sA(M * N), cA(M * N);
        long lo = 1L << 40, hi = -1;
        for (int n = 0; n < N; ++n)
          for (int m = 0; m < M; ++m) {
            sA[m + M * n] = long(&sX(m, n) - sbuf);
            cA[m + M * n] = long(&cX(m, n) - sbuf);
            lo = std::min(lo, sA[m + M * n]);
            hi = std::max(hi, sA[m + M * n]);
          }
        // the stage's region: from its first element to the end of its span (stage 0 starts at 0)
        // stage 0: CuTe's own buffer size, cosize of its layout (a swizzle offset included as CuTe counts it);
        // a later stage: from its first element to the end of its span
        long slo = s == 0 ? 0 : lo * EB;
        long shi = s == 0 ? long(cosize(sX.layout())) * EB : (hi + 1) * EB;
        std::string at = fmt(" (ld %ld, stage %ld)", ld, s);
        Verdicts one_v;
        one_v.init({"coverage", "alignment", "exactly_once", "slot_agreement", "bank_conflicts", "in_bounds", "coalescing"});
        auto mv = record<G2S, M, N>(tc, gX, sX, reinterpret_cast<char const*>(gbuf.data()),
                                   reinterpret_cast<char const*>(sbuf), -1, -1);
        check<G2S>(one_v, mv, EB, M, gA, sA, cA, slo, shi, galign, salign, at, gi);
        // an auto-vectorizing atom has no predicated vector instruction in CuTe (copy_if copies it element by
        // element, really dereferencing): its vectors are predicated as the kernels predicate them, on the
        // coordinate of their first element (the element at the first gmem byte CuTe's vector moves)
        auto run_res = [&](int rm, int rn) {
          if (one_v.status["in_bounds"] == "refuted") return;
          if (first_pred) {
            std::vector<Move> mr;
            for (auto const& m : mv)
              if (gi.any(m.g, [&](long i) { return (i % M) < rm && (i / M) < rn; })) mr.push_back(m);
            check_residue<M>(one_v, mr, gi, rm, rn, at);
            return;
          }
          auto mr = record<G2S, M, N>(tc, gX, sX, reinterpret_cast<char const*>(gbuf.data()),
                                     reinterpret_cast<char const*>(sbuf), rm, rn);
          check_residue<M>(one_v, mr, gi, rm, rn, at);
        };
        for (int r : resM) run_res(r, N);
        for (int r : resN) run_res(M, r);
        for (auto const& kv : one_v.status) {
          if (kv.second == "refuted") {
            v.fail(kv.first, one_v.detail[kv.first]);
            if (per_stage[s].find(kv.first) == std::string::npos) per_stage[s] += kv.first + " ";
          }
        }
        v.worst = std::max(v.worst, one_v.worst);
      };
      if constexpr (staged) one(sXall(_, _, s), cXall(_, _, s)); else one(sXall, cXall);
    }
  }
  std::printf("DPV {\"id\": \"%s\", \"bank_degree\": %ld, \"smem_bytes\": %ld, \"stages\": %d", id,
              long(std::lround(v.worst)), total * EB, nst);
  for (auto const& kv : v.status) std::printf(", \"%s\": \"%s\"", kv.first.c_str(), kv.second.c_str());
  std::printf(", \"stages_exactly_once\": \"%s\", \"per_stage\": [", st.status["exactly_once"].c_str());
  for (int s = 0; s < nst; ++s) std::printf("%s\"%s\"", s ? ", " : "", per_stage[s].c_str());
  std::printf("], \"detail\": {");
  bool first = true;
  for (auto const& kv : v.detail) {
    std::printf("%s\"%s\": \"%s\"", first ? "" : ", ", kv.first.c_str(), oracle::Out::esc(kv.second).c_str());
    first = false;
  }
  if (!st.detail.empty()) std::printf("%s\"stages\": \"%s\"", first ? "" : ", ", oracle::Out::esc(st.detail["exactly_once"]).c_str());
  std::printf("}}\n");
  std::fflush(stdout);
}

}  // namespace dpo
