// Scenes over MPI ranks (docs/scaling.md, "Scenes"): what a rank needs to
// take its share of a multi-L-system scene (Lipp et al. §6) before anything
// is derived, and to write its geometry as a part of one glTF.
//
//  1. cost prediction: the Parikh vector of the axiom (how many of each
//     symbol) pushed through the production table, step by step — for a D0L
//     system the exact lengths the count pass will find (ABOP §1.2; growth
//     functions of D0L systems), for the others their expectation;
//  2. partition: the optimal linear partition of the instances' costs into
//     contiguous ranges (binary search over the bottleneck, greedy check), so
//     that the ranks' outputs concatenate in rank order into the one-process
//     output (geometry, module string, running hashes);
//  3. glTF parts: a rank's .glb split into its JSON and binary chunks, and the
//     index glTF joining the parts' JSON with external buffers (glTF 2.0
//     §3.6.1: buffers may reference external binary files by uri).
#include <algorithm>
#include <array>
#include <cstring>
#include <nlohmann/json.hpp>

#include "lsystem/lsystem_data.hpp"
#include "procgen/error.hpp"
#include "procgen/scene.hpp"

namespace procgen {
namespace {

constexpr double kMaxCost = double(uint64_t{1} << 48);

/// What one application of a symbol's productions writes, in expectation:
/// (symbol, modules, parameters) per successor symbol, and the probability
/// that the module is kept as it is (no production, or none applies).
struct ExpectedSuccessors {
  struct Out {
    uint8_t symbol;
    double modules, params;
  };
  std::vector<Out> out;
  double keep = 1.0;
};
using SuccessorTable = std::array<ExpectedSuccessors, PG_SYMBOL_COUNT>;

SuccessorTable expectedSuccessors(const detail::RuleTable& table) {
  SuccessorTable succ;
  for (int c = 0; c < PG_SYMBOL_COUNT; ++c) {
    const int32_t first = table.first_by_symbol[size_t(c)];
    if (first == PG_NO_PRODUCTION) continue;  // the identity: kept as it is
    bool stochastic = false;
    for (int32_t p = first; p != PG_NO_PRODUCTION; p = table.productions[size_t(p)].next)
      stochastic = stochastic || table.productions[size_t(p)].probability != PG_NOT_STOCHASTIC;
    std::array<double, PG_SYMBOL_COUNT> counts{}, params{};
    double total_weight = 0.0;
    bool must_apply = stochastic;  // one of the stochastic productions is drawn
    for (int32_t p = first; p != PG_NO_PRODUCTION; p = table.productions[size_t(p)].next) {
      const PgProduction& prod = table.productions[size_t(p)];
      const double weight = !stochastic                             ? 1.0
                            : prod.probability != PG_NOT_STOCHASTIC ? std::max(0.0, double(prod.probability))
                                                                    : 0.0;
      for (int32_t m = 0; m < prod.succ_count; ++m) {
        const PgSuccessorModule& module = table.successors[size_t(prod.succ_begin + m)];
        counts[size_t(module.symbol) & 0xff] += weight;
        params[size_t(module.symbol) & 0xff] += weight * double(module.num_params);
      }
      total_weight += weight;
      // No condition and no context: it applies whenever the ones before do
      // not, and the ones after it never do (the first one: exact, D0L).
      if (!stochastic && prod.condition < 0 && prod.lc_count == 0 && prod.rc_count == 0) {
        must_apply = true;
        break;
      }
    }
    double keep = 0.0;
    if (!must_apply) {  // perhaps no production applies: the identity is one more outcome
      keep = 1.0;
      total_weight += 1.0;
    }
    ExpectedSuccessors& e = succ[size_t(c)];
    if (total_weight <= 0.0) continue;  // weights all zero: treated as the identity
    e.keep = keep / total_weight;
    for (int s = 0; s < PG_SYMBOL_COUNT; ++s)
      if (counts[size_t(s)] > 0.0)
        e.out.push_back({uint8_t(s), counts[size_t(s)] / total_weight, params[size_t(s)] / total_weight});
  }
  return succ;
}

/// The Parikh vector of the modules (how many of each symbol) and of their
/// parameters pushed through the productions step by step.
SceneInstanceWork predictedWork(const detail::LSystemData& data, int iterations) {
  const SuccessorTable succ = expectedSuccessors(data.productions);
  std::array<double, PG_SYMBOL_COUNT> modules{}, params{}, next_modules{}, next_params{};
  const ModuleString& axiom = data.axiom;
  for (uint64_t i = 0; i < axiom.size(); ++i) {
    modules[axiom.symbols[i]] += 1.0;
    params[axiom.symbols[i]] += double(axiom.paramCount(i));
  }
  SceneInstanceWork work;
  double written = 0.0;
  for (int step = 0; step < iterations && written < kMaxCost; ++step) {
    next_modules.fill(0.0);
    next_params.fill(0.0);
    for (int c = 0; c < PG_SYMBOL_COUNT; ++c) {
      if (modules[size_t(c)] == 0.0) continue;
      const ExpectedSuccessors& e = succ[size_t(c)];
      next_modules[size_t(c)] += modules[size_t(c)] * e.keep;  // kept modules keep their parameters
      next_params[size_t(c)] += params[size_t(c)] * e.keep;
      for (const ExpectedSuccessors::Out& o : e.out) {
        next_modules[o.symbol] += modules[size_t(c)] * o.modules;
        next_params[o.symbol] += modules[size_t(c)] * o.params;
      }
    }
    modules = next_modules;
    params = next_params;
    double length = 0.0, carried = 0.0;
    for (int c = 0; c < PG_SYMBOL_COUNT; ++c) {
      length += modules[size_t(c)];
      carried += params[size_t(c)];
    }
    written += length;  // the modules this step writes
    work.params_written += carried;
  }
  work.modules_written = written;
  for (int c = 0; c < PG_SYMBOL_COUNT; ++c) {
    work.modules += modules[size_t(c)];
    work.params += params[size_t(c)];
  }
  work.segments = modules[size_t('F')] + modules[size_t('G')];
  return work;
}

/// Blocks needed when no block may cost more than `limit`, filling from the end.
uint64_t blocksFromEnd(std::span<const uint64_t> costs, uint64_t limit) {
  uint64_t blocks = 1, sum = 0;
  for (size_t i = costs.size(); i-- > 0;) {
    if (sum + costs[i] > limit) {
      ++blocks;
      sum = 0;
    }
    sum += costs[i];
  }
  return blocks;
}

uint32_t readU32(std::span<const uint8_t> b, size_t at) {
  uint32_t v = 0;
  for (int k = 3; k >= 0; --k) v = (v << 8) | b[at + size_t(k)];
  return v;
}

}  // namespace

std::vector<SceneInstanceWork> predictSceneWork(const LSystemScene& scene, const DeriveOptions& options) {
  return predictSceneWork(scene, options, {0, scene.instances.size()});
}

std::vector<SceneInstanceWork> predictSceneWork(const LSystemScene& scene, const DeriveOptions& options,
                                                LSystemSceneRange range) {
  std::vector<SceneInstanceWork> work(range.size());
  for (size_t k = 0; k < work.size(); ++k) {
    const LSystemInstance& inst = scene.instances[range.first + k];
    const detail::LSystemData& data = inst.lsystem.data();
    const int iterations =
        options.iterations ? *options.iterations : inst.iterations.value_or(data.derivation_length);
    work[k] = predictedWork(data, std::max(0, iterations));
  }
  return work;
}

std::vector<uint64_t> predictSceneCosts(const LSystemScene& scene, const DeriveOptions& options) {
  const std::vector<SceneInstanceWork> work = predictSceneWork(scene, options);
  std::vector<uint64_t> costs(work.size());
  for (size_t k = 0; k < costs.size(); ++k)  // plus the final string, which the turtle reads
    costs[k] = static_cast<uint64_t>(std::llround(std::min(kMaxCost, work[k].modules_written + work[k].modules)));
  return costs;
}

// Nanoseconds per predicted item of one rank's work with one cpu thread,
// fitted to the forest's models on this project's machine (docs/scaling.md,
// "Scenes"): 2D plants (D0L, stochastic) and the parametric 3D tree measured
// alone, the minimum of nine runs of each phase. Only their ratios matter
// for the partition: a parameter costs about as much again as its module in
// derivation and drawing (evaluated, then read by the turtle) and ten times
// a module in the string hash (its shortest round-trip text).
constexpr double kDeriveNsPerModule = 3.5, kDeriveNsPerParam = 8.0;
constexpr double kDrawNsPerModule = 7.7, kDrawNsPerParam = 9.0;
constexpr double kHashNsPerModule = 2.3, kHashNsPerParam = 25.0;
// Rank 0 joining the geometry: every segment's 40 bytes written once into
// fresh huge pages (its own copied, the others' received).
constexpr double kJoinNsPerSegment = 8.0;

std::vector<uint64_t> predictSceneTimes(std::span<const SceneInstanceWork> work, bool string_hashes) {
  std::vector<uint64_t> ns(work.size());
  for (size_t k = 0; k < work.size(); ++k) {
    const SceneInstanceWork& w = work[k];
    double t = kDeriveNsPerModule * w.modules_written + kDeriveNsPerParam * w.params_written +
               kDrawNsPerModule * w.modules + kDrawNsPerParam * w.params;
    if (string_hashes) t += kHashNsPerModule * w.modules + kHashNsPerParam * w.params;
    ns[k] = static_cast<uint64_t>(std::llround(std::min(kMaxCost, t)));
  }
  return ns;
}

uint64_t predictSceneJoinTime(std::span<const SceneInstanceWork> work) {
  double segments = 0.0;
  for (const SceneInstanceWork& w : work) segments += w.segments;
  return static_cast<uint64_t>(std::llround(std::min(kMaxCost, kJoinNsPerSegment * segments)));
}

std::vector<LSystemSceneRange> partitionByCost(std::span<const uint64_t> costs, int ranks, uint64_t root_extra) {
  if (ranks < 1) throw Error("partitionByCost: ranks must be at least 1", ExitCode::kUsage);
  // Rank 0's extra work is one more item in front of the others, which only
  // rank 0's range may hold: item i of `costs` is capped[i + 1].
  // Costs are capped so that their sum fits: n · 2^48 < 2^64 for n < 2^16,
  // and above that each cost is capped at 2^64 / n.
  const uint64_t n = costs.size() + 1;
  const uint64_t cap = std::min(uint64_t{1} << 48, UINT64_MAX / n);
  std::vector<uint64_t> capped(n);
  capped[0] = root_extra;
  std::copy(costs.begin(), costs.end(), capped.begin() + 1);
  uint64_t total = 0, largest = 0;
  for (uint64_t& c : capped) {
    c = std::min(c, cap);
    total += c;
    largest = std::max(largest, c);
  }
  // The smallest bottleneck in [largest, total] for which `ranks` blocks suffice.
  uint64_t lo = largest, hi = std::max(total, largest);
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (blocksFromEnd(capped, mid) <= uint64_t(ranks))
      hi = mid;
    else
      lo = mid + 1;
  }
  // The blocks for that bottleneck, the last rank's first: rank 0 keeps the
  // rest (and the extra item, which no other rank may take).
  std::vector<LSystemSceneRange> ranges(static_cast<size_t>(ranks));
  size_t end = capped.size();
  for (int r = ranks - 1; r >= 0; --r) {
    size_t begin = end;
    uint64_t sum = 0;
    if (r == 0)
      begin = 1;
    else
      while (begin > 1 && sum + capped[begin - 1] <= lo) sum += capped[--begin];
    ranges[size_t(r)] = {begin - 1, end - 1};
    end = begin;
  }
  return ranges;
}

GlbChunks splitGlb(std::span<const uint8_t> glb) {
  // glTF 2.0 §4.4: a 12-byte header (magic, version, length), then chunks of
  // (length, type, data): JSON first, then an optional BIN.
  auto bad = [] { return Error("not a glTF 2.0 binary (.glb)"); };
  if (glb.size() < 20 || std::memcmp(glb.data(), "glTF", 4) != 0 || readU32(glb, 4) != 2 ||
      readU32(glb, 8) != glb.size())
    throw bad();
  GlbChunks out;
  size_t at = 12;
  while (at + 8 <= glb.size()) {
    const uint32_t length = readU32(glb, at), type = readU32(glb, at + 4);
    if (length > glb.size() - at - 8) throw bad();
    const uint8_t* data = glb.data() + at + 8;
    if (type == 0x4E4F534Au)
      out.json.assign(reinterpret_cast<const char*>(data), length);  // "JSON"
    else if (type == 0x004E4942u)
      out.bin.assign(data, data + length);  // "BIN\0"
    at += 8 + size_t(length);
  }
  if (out.json.empty()) throw bad();
  return out;
}

std::string mergeGltfParts(std::span<const std::string> part_json, std::span<const std::string> buffer_uris) {
  using Json = nlohmann::ordered_json;
  if (part_json.size() != buffer_uris.size())
    throw Error("mergeGltfParts: one buffer name per part is needed", ExitCode::kUsage);
  Json index = Json::object();
  Json buffers = Json::array(), views = Json::array(), accessors = Json::array(), meshes = Json::array(),
       nodes = Json::array(), scene_nodes = Json::array();
  Json materials = Json::array();
  Json scene_name = "procgen";
  for (size_t p = 0; p < part_json.size(); ++p) {
    Json part;
    try {
      part = Json::parse(part_json[p]);
    } catch (const std::exception& e) {
      throw Error("glTF part " + std::to_string(p) + ": " + e.what());
    }
    if (p == 0) {
      index["asset"] = part.value("asset", Json::object());
      materials = part.value("materials", Json::array());
      if (part.contains("scenes") && !part["scenes"].empty())
        scene_name = part["scenes"][0].value("name", "procgen");
    } else if (part.value("materials", Json::array()) != materials) {
      throw Error("glTF part " + std::to_string(p) + ": its materials differ from part 0's");
    }
    const size_t view_base = views.size(), accessor_base = accessors.size(), mesh_base = meshes.size(),
                 node_base = nodes.size();
    const Json part_buffers = part.value("buffers", Json::array());
    if (part_buffers.size() > 1) throw Error("glTF part " + std::to_string(p) + ": more than one buffer");
    const size_t buffer = buffers.size();
    if (!part_buffers.empty())
      buffers.push_back(Json{{"byteLength", part_buffers[0].at("byteLength")}, {"uri", buffer_uris[p]}});
    for (Json v : part.value("bufferViews", Json::array())) {
      v["buffer"] = buffer;
      views.push_back(std::move(v));
    }
    for (Json a : part.value("accessors", Json::array())) {
      if (a.contains("bufferView")) a["bufferView"] = a["bufferView"].get<size_t>() + view_base;
      accessors.push_back(std::move(a));
    }
    for (Json m : part.value("meshes", Json::array())) {
      for (Json& prim : m.at("primitives")) {
        for (auto& [name, id] : prim.at("attributes").items()) id = id.get<size_t>() + accessor_base;
        if (prim.contains("indices")) prim["indices"] = prim["indices"].get<size_t>() + accessor_base;
      }
      meshes.push_back(std::move(m));
    }
    for (Json nd : part.value("nodes", Json::array())) {
      if (nd.contains("mesh")) nd["mesh"] = nd["mesh"].get<size_t>() + mesh_base;
      nodes.push_back(std::move(nd));
    }
    if (part.contains("scenes") && !part["scenes"].empty())
      for (const Json& id : part["scenes"][0].value("nodes", Json::array()))
        scene_nodes.push_back(id.get<size_t>() + node_base);
  }
  if (!accessors.empty()) index["accessors"] = std::move(accessors);
  if (!buffers.empty()) index["buffers"] = std::move(buffers);
  if (!views.empty()) index["bufferViews"] = std::move(views);
  if (!materials.empty()) index["materials"] = std::move(materials);
  if (!meshes.empty()) index["meshes"] = std::move(meshes);
  if (!nodes.empty()) index["nodes"] = std::move(nodes);
  index["scene"] = 0;
  Json scene = Json{{"name", scene_name}};
  if (!scene_nodes.empty()) scene["nodes"] = std::move(scene_nodes);
  index["scenes"] = Json::array({std::move(scene)});
  return index.dump() + "\n";
}

}  // namespace procgen
