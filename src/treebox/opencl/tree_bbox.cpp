// Stage tree_bbox, opencl backend: host driver of tree_bbox.cl on top of the
// device matcher (matcher.hpp). Levien §6 and §9: clips intersect down by
// pointer jumping over the matched group links, blends union up through a
// tree of leaf unions queried once per blend. The scene is checked on the host
// first (same messages as the serial twin); kinds, boxes and the final boxes
// are the only transfers.
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "treebox/monoids.h"
#include "treebox/opencl/matcher.hpp"

namespace procgen::treebox_detail {

using opencl::Buffer;
using opencl::Context;
using opencl::Kernel;

namespace {

static_assert(sizeof(Box3) == sizeof(PgBox), "Box3 and PgBox share one layout");
constexpr uint64_t kUnionBlock = 32;  // PG_UNION_BLOCK in tree_bbox.cl

// The serial twin's exceptions, found without running it.
void checkBoxTree(const BoxTree& scene) {
  const uint64_t n = scene.size();
  uint64_t depth = 0;
  for (uint64_t i = 0; i < n; ++i) {
    switch (scene.kinds[i]) {
      case BoxTreeNodeKind::kLeaf: break;
      case BoxTreeNodeKind::kClip:
      case BoxTreeNodeKind::kBlend: ++depth; break;
      case BoxTreeNodeKind::kEnd:
        if (depth == 0)
          throw std::invalid_argument("treeBoundingBoxes: unmatched end at element " +
                                      std::to_string(i));
        --depth;
        break;
      default:
        throw std::invalid_argument("treeBoundingBoxes: bad node kind at element " +
                                    std::to_string(i));
    }
  }
  if (depth == 0) return;
  // The innermost unclosed group: the last element whose depth before it is depth - 1.
  uint64_t d = depth;
  for (uint64_t i = n; i-- > 0;) {
    const BoxTreeNodeKind k = scene.kinds[i];
    const uint64_t before = k == BoxTreeNodeKind::kEnd ? d + 1 : k == BoxTreeNodeKind::kLeaf ? d : d - 1;
    if (before == depth - 1)
      throw std::invalid_argument("treeBoundingBoxes: group opened at element " +
                                  std::to_string(i) + " is never closed");
    d = before;
  }
}

struct BBoxDevice {
  explicit BBoxDevice(Context& c)
      : ctx(c),
        kinds(c, "scene kinds"),
        boxes(c, "scene boxes"),
        parent(c, "group links"),
        val{Buffer(c, "clip boxes"), Buffer(c, "clip boxes")},
        link{Buffer(c, "clip links"), Buffer(c, "clip links")},
        tree(c, "leaf union tree"),
        level_off(c, "union tree levels"),
        out(c, "tree boxes") {
    cl_program p = c.program("treebox/opencl/tree_bbox.cl");
    init = Kernel(p, "clipInit");
    jump = Kernel(p, "clipJump");
    leaves = Kernel(p, "clipLeaves");
    union_level = Kernel(p, "unionLevel");
    close = Kernel(p, "closeGroups");
    wg = c.workGroupSize(close.get(), 64);
  }
  Context& ctx;
  Buffer kinds, boxes, parent, val[2], link[2], tree, level_off, out;
  Kernel init, jump, leaves, union_level, close;
  size_t wg;
};

}  // namespace

void treeBBoxOpenCL(const BoxTree& scene, Box3* out, int device, OpenCLMatchShape shape) {
  checkBoxTree(scene);
  const uint64_t n = scene.size();
  Context& ctx = Context::get(device);
  auto lock = ctx.lock();
  DeviceMatcher& matcher = DeviceMatcher::get(ctx, 8, shape);
  if (n == 0) return;
  BBoxDevice& d = ctx.state<BBoxDevice>();
  const cl_ulong n_arg = n;

  d.kinds.upload(scene.kinds.data(), n);
  d.boxes.upload(scene.boxes.data(), n * sizeof(PgBox));
  const MatchStats st =
      matcher.run(d.kinds.get(), n, static_cast<uint8_t>(BoxTreeNodeKind::kClip),
                  static_cast<uint8_t>(BoxTreeNodeKind::kBlend),
                  static_cast<uint8_t>(BoxTreeNodeKind::kEnd), d.parent, true);

  // §6.1: clips, pointer jumping until a chain covers the deepest path.
  for (Buffer* b : {&d.val[0], &d.val[1]}) b->reserve(n * sizeof(PgBox));
  for (Buffer* b : {&d.link[0], &d.link[1]}) b->reserve(n * sizeof(cl_long));
  d.init.arg(0, d.kinds).arg(1, d.boxes).arg(2, n_arg).arg(3, d.parent).arg(4, d.val[0]).arg(5, d.link[0]);
  d.init.run(ctx, n, d.wg);
  int cur = 0;
  for (uint64_t chain = 1; chain < st.max_depth; chain *= 2) {
    d.jump.arg(0, n_arg).arg(1, d.val[cur]).arg(2, d.link[cur]).arg(3, d.val[1 - cur]).arg(4, d.link[1 - cur]);
    d.jump.run(ctx, n, d.wg);
    cur = 1 - cur;
  }

  // §6.2: blends, a tree of leaf unions, one range query per blend.
  std::vector<cl_ulong> off, len;
  for (uint64_t l = n, o = 0;; l = (l + kUnionBlock - 1) / kUnionBlock) {
    off.push_back(o);
    len.push_back(l);
    o += l;
    if (l <= 1) break;
  }
  d.tree.reserve((off.back() + len.back()) * sizeof(PgBox));
  d.out.reserve(n * sizeof(PgBox));
  d.level_off.upload(off.data(), off.size() * sizeof(cl_ulong));
  d.leaves.arg(0, d.kinds).arg(1, d.boxes).arg(2, n_arg).arg(3, d.parent).arg(4, d.val[cur]);
  d.leaves.arg(5, d.out).arg(6, d.tree);
  d.leaves.run(ctx, n, d.wg);
  for (size_t l = 1; l < off.size(); ++l) {
    d.union_level.arg(0, d.tree).arg(1, off[l - 1]).arg(2, len[l - 1]).arg(3, off[l]);
    d.union_level.run(ctx, len[l], d.wg);
  }
  d.close.arg(0, d.kinds).arg(1, n_arg).arg(2, d.parent).arg(3, d.tree).arg(4, d.level_off);
  d.close.arg(5, static_cast<cl_int>(off.size())).arg(6, d.out);
  d.close.run(ctx, n, d.wg);
  d.out.read(out, n * sizeof(PgBox));
}

}  // namespace procgen::treebox_detail
