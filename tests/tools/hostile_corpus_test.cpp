// The hostile-input corpus (issue 16, point 6): malformed and explosive
// inputs for every subcommand, run through the built `procgen` binary on every
// backend, each under a memory limit (RLIMIT_AS) and a time limit, with
// the exit code it must give and a check that no output (nor a temporary
// file) is left when the run fails.
//
// Adding a case is adding a row to kRows: the subcommand, its arguments
// (`{dir}` is the scratch directory the inputs are written to and the outputs
// go to), the input files, the expected exit code. Rows run once per backend
// (serial, cpu, opencl where a device exists) unless `per_backend` is false.
// A row whose fix belongs to another branch names the defect and stays
// disabled (`enabled = false`): it is listed and skipped with the reason until
// the fix is merged; PROCGEN_HOSTILE_ALL=1 runs them anyway. Children also
// get RLIMIT_FSIZE, so a writer that loops cannot fill the disk.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <malloc.h>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/backends.hpp"
#include "common/cli_run.hpp"
#include "common/sanitizer.hpp"
#include "procgen/memory.hpp"

namespace {

namespace fs = std::filesystem;
using procgen::Backend;

/// Every run's limits: the child's address space (not under a sanitizer,
/// whose shadow memory rules out RLIMIT_AS), the size of any file it writes,
/// its user CPU time (all threads: 5 s, the issue's bound), its system time
/// and, as a backstop for a child that sleeps or blocks, its wall time.
/// The bound is on CPU time because CI shares two cores between parallel test
/// processes: at a load of 14, a refusal that needs 0.2 s of CPU took 2.3 s
/// of wall time here. User and system time have separate bounds because the
/// system time of first touching memory is the host's, not ours: on a
/// Firecracker guest that hands free pages back to its host
/// (page_reporting), the same 550 MB refusal of lsystem_parametric_explosion
/// took 0.64-0.97 s of user time and 0.03-5.55 s of system time over 16 runs.
/// The peak-RSS bound below is what limits the memory a run may touch.
constexpr uint64_t kAddressSpaceLimit = uint64_t{2} << 30;
constexpr uint64_t kFileSizeLimit = uint64_t{256} << 20;
constexpr double kCpuSeconds = procgen::test::kUnderSanitizer ? 60.0 : 5.0;
constexpr double kSystemSeconds = procgen::test::kUnderSanitizer ? 120.0 : 20.0;
constexpr double kWallSeconds = procgen::test::kUnderSanitizer ? 240.0 : 30.0;

struct InputFile {
  std::string name;
  std::string content;
};

struct Row {
  std::string name;     ///< test-name suffix: letters, digits, '_'
  std::string args;     ///< after `procgen`; {dir} = the scratch directory; split at blanks
  std::vector<InputFile> files;
  int exit_code = 2;
  std::string defect;   ///< e.g. "D2 (hostile-budget)": whose fix the row waits for
  bool enabled = true;
  bool per_backend = true;  ///< append --backend B for serial, cpu and opencl
  std::string opencl_defect;  ///< non-empty: only the opencl run waits for this fix
  /// Appended under a sanitizer, where RLIMIT_AS is off and so the default
  /// budget is half the RAM: for rows that would then derive for minutes.
  std::string sanitizer_args;
};

/// How gtest prints a row (failure headers): its arguments.
inline void PrintTo(const Row& r, std::ostream* os) { *os << r.args; }

std::string repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

const std::string kDoubling = "Lsystem: 1\nAxiom: F\nF --> FF\nendlsystem\n";

/// A row: `defect` names the fix it waits for, and `enabled` = false keeps it
/// skipped until that fix is merged.
Row make(std::string name, std::string args, std::vector<InputFile> files, int exit_code = 2,
         std::string defect = "", bool enabled = true) {
  Row r;
  r.name = std::move(name);
  r.args = std::move(args);
  r.files = std::move(files);
  r.exit_code = exit_code;
  r.defect = std::move(defect);
  r.enabled = enabled;
  return r;
}

std::vector<Row> rows() {
  std::vector<Row> r;
  // ---- lsystem: malformed
  r.push_back(make("lsystem_unclosed_parameter", "lsystem {dir}/m.l -o {dir}/x.svg",
               {{"m.l", "Lsystem: 1\nAxiom: F\nF --> F(\nendlsystem\n"}}));
  r.push_back(make("lsystem_empty_file", "lsystem {dir}/m.l -o {dir}/x.txt", {{"m.l", ""}}));
  r.push_back(make("lsystem_binary_bytes", "lsystem {dir}/m.l -o {dir}/x.txt",
               {{"m.l", std::string("\x7f" "ELF\x02\x01\x01\0\0\0\xff\xfe\x80\x81", 14) + repeat("\x01\xc3\x28", 300)}}));
  r.push_back(make("lsystem_missing_file", "lsystem {dir}/absent.l -o {dir}/x.txt", {}));
  r.push_back(make("lsystem_deep_expression_nesting", "lsystem {dir}/m.l -o {dir}/x.txt",
               {{"m.l", "Lsystem: 1\nAxiom: F(" + repeat("(", 100000) + "1" + repeat(")", 100000) + ")\nendlsystem\n"}}));
  r.push_back(make("lsystem_two_megabyte_token", "lsystem {dir}/m.l -o {dir}/x.txt",
               {{"m.l", "Lsystem: 1\nAxiom: F\n" + repeat("Q", 2 << 20) + "\nendlsystem\n"}}));
  r.push_back(make("lsystem_unknown_function", "lsystem {dir}/m.l -o {dir}/x.txt",
               {{"m.l", "Lsystem: 1\nAxiom: F(frobnicate(2))\nendlsystem\n"}}));
  r.push_back(make("lsystem_bad_option", "lsystem {dir}/m.l --frobnicate -o {dir}/x.txt", {{"m.l", kDoubling}}, 1));
  r.push_back(make("lsystem_bad_extension", "lsystem {dir}/m.l -o {dir}/x.doc", {{"m.l", kDoubling}}, 1));
  r.push_back(make("lsystem_negative_iterations", "lsystem {dir}/m.l -n -3 -o {dir}/x.txt", {{"m.l", kDoubling}}, 1));
  r.push_back(make("lsystem_output_in_missing_directory", "lsystem {dir}/m.l -n 3 -o {dir}/no/such/x.txt",
               {{"m.l", kDoubling}}, 4));
  // ---- lsystem: explosive
  // Under RLIMIT_AS the default budget is half of it (1 GiB here), so these
  // stop long before the address space runs out, on every backend.
  r.push_back(make("lsystem_doubling_60_steps", "lsystem {dir}/m.l -n 60 -o {dir}/x.txt", {{"m.l", kDoubling}}));
  r.push_back(make("lsystem_doubling_60_steps_svg", "lsystem {dir}/m.l -n 60 -o {dir}/x.svg", {{"m.l", kDoubling}}));
  r.push_back(make("lsystem_max_modules", "lsystem {dir}/m.l -n 30 --max-modules 1000 -o {dir}/x.txt",
               {{"m.l", kDoubling}}));
  // Without a module limit and with a budget of half the RAM, the serial run
  // derived until an allocation failed at the 2 GiB address-space limit
  // (5.5 s of CPU, mostly page faults), and opencl aborted inside PoCL; the
  // budget now follows RLIMIT_AS.
  r.push_back(make("lsystem_parametric_explosion", "lsystem {dir}/m.l -n 60 -o {dir}/x.txt",
               {{"m.l", "Lsystem: 1\nAxiom: A(1)\nA(x) --> A(x+1)A(x*2)\nendlsystem\n"}}));
  r.back().sanitizer_args = "--memory-budget 256M";
  r.push_back(make("lsystem_parametric_explosion_max_modules", "lsystem {dir}/m.l -n 60 --max-modules 100000 -o {dir}/x.txt",
               {{"m.l", "Lsystem: 1\nAxiom: A(1)\nA(x) --> A(x+1)A(x*2)\nendlsystem\n"}}));
  // 2^22 modules fit a 64 MiB budget as a string (~5 B each) but not drawn
  // (~40 B each): the refusal comes from the interpretation (D3). A small
  // budget keeps it quick in sanitizer builds too (at -n 28 under the default
  // budget, ASan took over the 30 s backstop).
  r.push_back(make("lsystem_interpretation_over_budget", "lsystem {dir}/m.l -n 22 --memory-budget 64M -o {dir}/x.svg",
               {{"m.l", kDoubling}}, 2, "D3 (hostile-budget)"));
  // A width of 1e38 made every segment an image-sized disc (~25 s at -n 12);
  // now the view fits the model and strokes covering the image hide the ones
  // before them.
  r.push_back(make("lsystem_huge_width_png", "lsystem {dir}/m.l -n 12 --width 1e38 -o {dir}/x.png",
               {{"m.l", kDoubling}}, 0));
  r.push_back(make("lsystem_homomorphism_explosion", "lsystem {dir}/m.l -n 1 --max-modules 1000 -o {dir}/x.svg",
               {{"m.l", "Lsystem: 1\nAxiom: B\nhomomorphism:\nmaximum depth: 40\nB --> BFB\nendlsystem\n"}},
               2, "D2 (hostile-budget)"));
  r.push_back(make("lsystem_homomorphism_unbounded", "lsystem {dir}/m.l -n 1 -o {dir}/x.svg",
               {{"m.l", "Lsystem: 1\nAxiom: B\nhomomorphism:\nmaximum depth: 1048576\nB --> BB\nendlsystem\n"}},
               2, "D2 (hostile-budget)"));
  r.push_back(make("lsystem_decomposition_recursive", "lsystem {dir}/m.l -n 1 -o {dir}/x.txt",
               {{"m.l", "Lsystem: 1\nAxiom: B\ndecomposition:\nmaximum depth: 1048576\nB --> BB\nendlsystem\n"}},
               2, "D2 (hostile-budget)"));
  // ---- lsystem: non-finite numbers, options, paths
  r.push_back(make("lsystem_nan_width_svg", "lsystem {dir}/m.l -o {dir}/x.svg",
               {{"m.l", "Lsystem: 1\nAxiom: !(0/0)F\nendlsystem\n"}}, 2, "D1 (finite numbers)"));
  r.push_back(make("lsystem_nan_stats_json", "lsystem {dir}/m.l --stats-json {dir}/s.json",
               {{"m.l", "Lsystem: 1\nAxiom: F(0/0)\nendlsystem\n"}}, 2, "D5 (finite numbers)"));
  r.push_back(make("lsystem_negative_seed", "lsystem {dir}/m.l --seed -1 -o {dir}/x.txt", {{"m.l", kDoubling}}, 1,
               "D6 (hostile-cli)"));
  r.push_back(make("lsystem_directory_input", "lsystem {dir}/sub -o {dir}/x.txt", {{"sub/keep", ""}}));
  r.push_back(make("lsystem_dev_zero_input", "lsystem /dev/zero -o {dir}/x.txt", {}, 2, "D7 (hostile-cli)"));
  r.push_back(make("lsystem_partial_outputs", "lsystem {dir}/m.l -n 3 -o {dir}/a.txt -o {dir}/no/such/b.png",
               {{"m.l", kDoubling}}, 4, "D8 (hostile-cli)"));
  r.push_back(make("lsystem_same_output_twice", "lsystem {dir}/m.l -n 3 -o {dir}/x.txt --stats-json {dir}/x.txt",
               {{"m.l", kDoubling}}, 1, "D10 (hostile-cli)"));
  r.push_back(make("lsystem_utf8_bom", "lsystem {dir}/m.l -n 3 -o {dir}/x.txt",
               {{"m.l", "\xef\xbb\xbf" + kDoubling}}, 0, "BOM (hostile-cli)"));
  // ---- scene
  const std::string instance_line = "m.l n=3\n";
  r.push_back(make("scene_malformed_key", "scene {dir}/s.scene -o {dir}/x.svg",
               {{"m.l", kDoubling}, {"s.scene", "m.l n=3 frobnicate=2\n"}}));
  r.push_back(make("scene_missing_model", "scene {dir}/s.scene -o {dir}/x.svg", {{"s.scene", "absent.l n=1\n"}}));
  r.push_back(make("scene_empty", "scene {dir}/s.scene -o {dir}/x.svg", {{"s.scene", "# nothing\n"}}));
  r.push_back(make("scene_malformed_model", "scene {dir}/s.scene -o {dir}/x.svg",
               {{"m.l", "Lsystem: 1\nAxiom: F(\nendlsystem\n"}, {"s.scene", "m.l\n"}}));
  r.push_back(make("scene_bad_vector", "scene {dir}/s.scene -o {dir}/x.svg",
               {{"m.l", kDoubling}, {"s.scene", "m.l at=1,2\n"}}));
  r.push_back(make("scene_explosive_instance", "scene {dir}/s.scene -o {dir}/x.svg",
               {{"m.l", kDoubling}, {"s.scene", "m.l n=60\n"}}));
  // Two instances take the batched passes (no D0L jumps); on opencl (PoCL)
  // they cost ~3.3 s of CPU per GiB of budget before the refusal, so a
  // smaller budget than the default (1 GiB under the 2 GiB limit) keeps the
  // row clear of the 5 s bound.
  r.push_back(make("scene_explosive_instances", "scene {dir}/s.scene --memory-budget 256M -o {dir}/x.svg",
               {{"m.l", kDoubling}, {"s.scene", "m.l n=60\nm.l n=59\n"}}));
  r.push_back(make("scene_infinite_scale", "scene {dir}/s.scene -o {dir}/x.svg",
               {{"m.l", kDoubling}, {"s.scene", "m.l n=3 scale=inf\n"}}));
  r.push_back(make("scene_float_overflow", "scene {dir}/s.scene -o {dir}/x.svg",
               {{"m.l", kDoubling}, {"s.scene", "m.l n=3 at=0,1e39,0\n"}}));
  r.push_back(make("scene_many_instances_over_max_modules", "scene {dir}/s.scene --max-modules 1000 -o {dir}/x.svg",
               {{"m.l", kDoubling}, {"s.scene", repeat("m.l n=8\n", 10)}}));
  // Exit 2 already, though with "the scene lists no L-system" (D7 changes the message).
  r.push_back(make("scene_directory_input", "scene {dir}/sub -o {dir}/x.svg", {{"sub/keep", ""}}));
  r.push_back(make("scene_ok", "scene {dir}/s.scene -o {dir}/x.svg", {{"m.l", kDoubling}, {"s.scene", instance_line}}, 0));
  // ---- parens
  r.push_back(make("parens_binary_bytes", "parens {dir}/p.txt -o {dir}/x.txt",
               {{"p.txt", std::string("(\0)\xff((", 6) + repeat(")", 1000)}}, 0));
  r.push_back(make("parens_missing_file", "parens {dir}/absent.txt -o {dir}/x.txt", {}));
  r.push_back(make("parens_negative_random", "parens --random -5 -o {dir}/x.txt", {}, 1, "D6 (hostile-cli)"));
  r.push_back(make("parens_huge_random", "parens --random 18446744073709551615 -o {dir}/x.txt", {}, 2,
               "D6 (hostile-cli)"));
  r.push_back(make("parens_directory_input", "parens {dir}/sub -o {dir}/x.txt", {{"sub/keep", ""}}, 2,
               "D7 (hostile-cli)"));
  r.push_back(make("parens_output_in_missing_directory", "parens {dir}/p.txt -o {dir}/no/such/x.txt",
               {{"p.txt", "(()"}}, 4));
  // ---- bbox
  r.push_back(make("bbox_malformed", "bbox {dir}/t.boxtree -o {dir}/x.txt", {{"t.boxtree", "leaf 0 0 1\nclip (\n"}}));
  r.push_back(make("bbox_binary_bytes", "bbox {dir}/t.boxtree -o {dir}/x.txt",
               {{"t.boxtree", std::string("\0\x01\x02\xff\xfe", 5) + repeat("\x80", 500)}}));
  r.push_back(make("bbox_missing_file", "bbox {dir}/absent.boxtree -o {dir}/x.txt", {}));
  r.push_back(make("bbox_negative_random", "bbox --random -1 -o {dir}/x.txt", {}, 1, "D6 (hostile-cli)"));
  r.push_back(make("bbox_directory_input", "bbox {dir}/sub -o {dir}/x.txt", {{"sub/keep", ""}}, 2,
               "D7 (hostile-cli)"));
  // ---- octree: point files, options, outputs (issue 18 point 8)
  const std::string ply_header = "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\n"
                                 "property float z\nend_header\n";
  const std::string binary_header = "ply\nformat binary_little_endian 1.0\nelement vertex 1000000000000\n"
                                    "property float x\nproperty float y\nproperty float z\nend_header\n";
  r.push_back(make("octree_malformed_ply", "octree {dir}/p.ply -o {dir}/t.octree", {{"p.ply", ply_header + "0 0 0\n1 1\n"}}));
  r.push_back(make("octree_nan_coordinate", "octree {dir}/p.xyz -o {dir}/t.octree --stats-json {dir}/s.json",
                   {{"p.xyz", "0 0 0\nnan 1 1\n"}}));
  r.push_back(make("octree_huge_vertex_count", "octree {dir}/p.ply -o {dir}/t.octree",
                   {{"p.ply", binary_header + std::string(36, '\0')}}));
  r.push_back(make("octree_truncated_faces", "octree {dir}/m.off --sample-surface 100 -o {dir}/t.octree",
                   {{"m.off", "OFF\n3 2 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n"}}));
  r.push_back(make("octree_binary_bytes", "octree {dir}/p.xyz -o {dir}/x.txt --query locate --random-queries 3",
                   {{"p.xyz", std::string("\0\x01\x02\xff\xfe", 5) + repeat("\x80", 500)}}));
  r.push_back(make("octree_missing_file", "octree {dir}/absent.ply -o {dir}/t.octree", {}));
  r.push_back(make("octree_directory_input", "octree {dir}/sub.xyz -o {dir}/t.octree", {{"sub.xyz/keep", ""}}));
  r.push_back(make("octree_dev_zero_queries", "octree {dir}/p.xyz --query locate --queries /dev/zero -o {dir}/x.txt",
                   {{"p.xyz", "0 0 0\n1 1 1\n"}}));
  r.push_back(make("octree_huge_random", "octree --random 18446744073709551615 -o {dir}/t.octree", {}));
  r.push_back(make("octree_huge_knn", "octree --random 100 --query knn:4294967295 --random-queries 1000000000000 -o {dir}/x.txt",
                   {}));
  r.push_back(make("octree_over_budget", "octree --random 1000000 --memory-budget 1M -o {dir}/t.octree", {}));
  r.push_back(make("octree_bad_query", "octree --random 100 --query knn:-1 --random-queries 3 -o {dir}/x.txt", {}, 1));
  r.push_back(make("octree_bad_leaf_size", "octree --random 100 --leaf-size 0 -o {dir}/t.octree", {}, 1));
  r.push_back(make("octree_negative_random", "octree --random -5 -o {dir}/t.octree", {}, 1));
  r.push_back(make("octree_same_output_twice", "octree --random 100 -o {dir}/t.octree --stats-json {dir}/t.octree", {},
                   1));
  r.push_back(make("octree_output_in_missing_directory", "octree --random 100 -o {dir}/t.octree -o {dir}/no/such/b.obj",
                   {}, 4));
  // flame: genomes that are malformed, name what flam3 does not have, ask for
  // absurd sizes, or would write where nothing can be written.
  const std::string flame_ok = R"(<flame size="32 18" scale="10" quality="1"><xform weight="1" linear="1" coefs="0.5 0 0 0.5 0 0"/><xform weight="1" spherical="1" coefs="0.5 0 0 0.5 0.5 0"/></flame>)";
  r.push_back(make("flame_truncated_xml", "flame {dir}/g.flam3 -o {dir}/f.png", {{"g.flam3", flame_ok.substr(0, 60)}}));
  r.push_back(make("flame_unknown_variation", "flame {dir}/g.flam3 -o {dir}/f.png",
                   {{"g.flam3", "<flame size=\"8 8\"><xform weight=\"1\" no_such_variation=\"1\"/></flame>"}}));
  r.push_back(make("flame_nan_coefficient", "flame {dir}/g.flam3 -o {dir}/f.png",
                   {{"g.flam3", "<flame size=\"8 8\"><xform weight=\"1\" linear=\"1\" coefs=\"nan 0 0 1 0 0\"/></flame>"}}));
  r.push_back(make("flame_huge_histogram", "flame {dir}/g.flam3 --size 1000000x1000000 -o {dir}/f.png",
                   {{"g.flam3", flame_ok}}));
  r.push_back(make("flame_symmetry_explosion", "flame {dir}/g.flam3 -o {dir}/f.png",
                   {{"g.flam3", "<flame size=\"8 8\"><symmetry kind=\"2000000000\"/><xform weight=\"1\" linear=\"1\"/></flame>"}}));
  r.push_back(make("flame_binary_bytes", "flame {dir}/g.flam3 -o {dir}/f.png",
                   {{"g.flam3", std::string("\0\x01<flame\xff", 10) + repeat("\x80", 500)}}));
  r.push_back(make("flame_output_in_missing_directory", "flame {dir}/g.flam3 -o {dir}/no/such/f.png",
                   {{"g.flam3", flame_ok}}, 4));

  r.push_back(make("octree_all_equal_points", "octree {dir}/p.xyz -o {dir}/t.octree --leaf-size 1",
                   {{"p.xyz", "1 1 1\n1 1 1\n1 1 1\n"}}, 0));
  return r;
}

struct Case {
  Row row;
  Backend backend = Backend::kSerial;
  bool with_backend = true;
  std::string name;
};

inline void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }


std::vector<Case> cases() {
  std::vector<Case> out;
  for (Row row : rows()) {
    if (!row.per_backend) {
      out.push_back({row, Backend::kSerial, false, row.name});
      continue;
    }
    for (Backend b : {Backend::kSerial, Backend::kCpu, Backend::kOpenCL})
      out.push_back({row, b, true, row.name + "_" + std::string(procgen::backendName(b))});
  }
  return out;
}

struct Outcome {
  int exit_code = -1;    ///< -1: killed by a signal
  int signal = 0;
  bool timed_out = false;
  double seconds = 0;
  long max_rss_kib = 0;
  double user_seconds = 0;
  double system_seconds = 0;
};

/// Runs `args` (no shell) with stdout/stderr into files, under the limits.
Outcome runLimited(const std::vector<std::string>& args, const fs::path& out, const fs::path& err) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // A forked child's peak RSS (ru_maxrss) starts at this process's resident
  // size, which exec does not reset: give back what earlier tests in this
  // process keep (reused large blocks, malloc's free lists) so that the
  // figure is the command's own.
  procgen::releaseLargeBlocks();
  malloc_trim(0);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    if (!procgen::test::kUnderSanitizer) {
      rlimit limit{kAddressSpaceLimit, kAddressSpaceLimit};
      setrlimit(RLIMIT_AS, &limit);
    }
    rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    // RLIMIT_CPU counts user + system time: it backs up both bounds.
    const rlim_t cpu = static_cast<rlim_t>(kCpuSeconds + kSystemSeconds) + 1;
    rlimit cpu_time{cpu, cpu};
    setrlimit(RLIMIT_CPU, &cpu_time);
    rlimit file_size{kFileSizeLimit, kFileSizeLimit};  // a writer that loops stops at SIGXFSZ
    setrlimit(RLIMIT_FSIZE, &file_size);
    const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int in = open("/dev/null", O_RDONLY);
    dup2(in, 0);
    dup2(o, 1);
    dup2(e, 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  Outcome r;
  int status = 0;
  rusage usage{};
  for (;;) {
    const pid_t done = wait4(pid, &status, WNOHANG, &usage);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (done == pid) break;
    if (r.seconds > kWallSeconds) {
      kill(pid, SIGKILL);
      wait4(pid, &status, 0, &usage);
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  r.max_rss_kib = usage.ru_maxrss;
  r.user_seconds = double(usage.ru_utime.tv_sec) + 1e-6 * double(usage.ru_utime.tv_usec);
  r.system_seconds = double(usage.ru_stime.tv_sec) + 1e-6 * double(usage.ru_stime.tv_usec);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

std::set<std::string> filesUnder(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    out.insert(fs::relative(e.path(), dir).string());
  return out;
}

std::vector<std::string> splitArgs(std::string text, const std::string& dir) {
  for (size_t at; (at = text.find("{dir}")) != std::string::npos;) text.replace(at, 5, dir);
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

class HostileCorpus : public testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("procgen_hostile_" + GetParam().name + "_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "run");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_P(HostileCorpus, ExitsAsExpectedWithinLimitsLeavingNoOutput) {
  const Case& c = GetParam();
  // PROCGEN_HOSTILE_ALL=1 runs the disabled rows too (to see which fixes landed).
  const bool all = std::getenv("PROCGEN_HOSTILE_ALL") != nullptr;
  if (!c.row.enabled && !all) GTEST_SKIP() << "disabled: " << c.row.defect;
  if (c.backend == Backend::kOpenCL && !c.row.opencl_defect.empty() && !all)
    GTEST_SKIP() << "disabled on opencl: " << c.row.opencl_defect;
  if (c.with_backend) PROCGEN_SKIP_UNLESS_RUNNABLE(procgen::test::makeVariant(c.backend, 2));
  const fs::path run = dir_ / "run";
  for (const InputFile& f : c.row.files) {
    fs::create_directories((run / f.name).parent_path());
    std::ofstream(run / f.name, std::ios::binary) << f.content;
  }
  const std::set<std::string> before = filesUnder(run);
  std::vector<std::string> args =
      splitArgs(c.row.args + (procgen::test::kUnderSanitizer ? " " + c.row.sanitizer_args : ""), run.string());
  args.insert(args.begin(), PROCGEN_CLI_PATH);
  if (c.with_backend) {
    args.push_back("--backend");
    args.emplace_back(procgen::backendName(c.backend));
  }
  const Outcome r = runLimited(args, dir_ / "stdout", dir_ / "stderr");
  const std::string err = procgen::test::slurp(dir_ / "stderr");
  const std::string shown = err.size() > 2000 ? err.substr(0, 2000) + "..." : err;
  SCOPED_TRACE(c.row.args + "\nstderr: " + shown);
  EXPECT_FALSE(r.timed_out) << "still running after " << kWallSeconds << " s of wall time";
  EXPECT_LT(r.user_seconds, kCpuSeconds) << "user CPU time (system: " << r.system_seconds << " s)";
  EXPECT_LT(r.system_seconds, kSystemSeconds) << "system CPU time";
  EXPECT_EQ(r.signal, 0) << "killed by signal " << r.signal << " (" << strsignal(r.signal) << ")";
  EXPECT_EQ(r.exit_code, c.row.exit_code);
  // Below the budget itself, not only the limit: under RLIMIT_AS the default
  // budget is half of it, and the budget counts resident memory near its
  // end (sanitizer runs have no RLIMIT_AS, so their budget is half the RAM).
  const uint64_t rss_ceiling = procgen::test::kUnderSanitizer ? kAddressSpaceLimit : kAddressSpaceLimit / 2;
  EXPECT_LT(uint64_t(r.max_rss_kib) * 1024, rss_ceiling) << "peak RSS over the memory budget";
  if (c.row.exit_code != 0) {
    EXPECT_NE(err.find("error:"), std::string::npos);
    EXPECT_EQ(filesUnder(run), before) << "a failed run left files behind";
  }
  // Messages stay short whatever the input (a 10 MB token is not echoed whole).
  EXPECT_LT(err.size(), 64u * 1024u);
}

INSTANTIATE_TEST_SUITE_P(Rows, HostileCorpus, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
