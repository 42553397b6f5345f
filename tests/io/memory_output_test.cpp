// Every writer's three variants — path, ByteSink, memory — give the same
// bytes; a sink that fails surfaces as OutputError from every format (also
// through libpng's longjmp and tinygltf's iostream); bad paths are
// OutputErrors.
#include "io/io_test_util.hpp"
#include "procgen/error.hpp"
#include "procgen/io.hpp"

namespace procgen::iotest {
namespace {

std::string str(const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); }

/// Records chunks and finish() calls; fails with OutputError after `fail_after` bytes.
class RecordingSink : public ByteSink {
 public:
  explicit RecordingSink(size_t fail_after = SIZE_MAX) : fail_after_(fail_after) {}
  void write(const void* data, size_t size) override {
    if (finished_ != 0) ADD_FAILURE() << "write after finish";
    if (bytes_.size() + size > fail_after_) throw OutputError("cannot write 'recording': disk full");
    bytes_.append(static_cast<const char*>(data), size);
  }
  void finish() override { ++finished_; }
  std::string name() const override { return "recording"; }
  std::string bytes_;
  int finished_ = 0;

 private:
  size_t fail_after_;
};

Geometry sampleGeometry() {
  Geometry g = kochCurve(3, 0.02f, true);
  g.segments[5].instance = 1;  // two instances: OBJ objects, glTF nodes
  addPolygon(g, {{0, 0, 0}, {0.2f, 0, 0}, {0.1f, 0.2f, 0.1f}}, 2, 1);
  return g;
}

struct Case {
  const char* file;
  GeometryFormat format;
  WriteOptions options;
};

std::vector<Case> geometryCases() {
  WriteOptions plain, tubes, ascii, mtl;
  tubes.cylinders = true;
  tubes.cylinder_sides = 5;
  ascii.ply_ascii = true;
  mtl.obj_mtl_name = "m.obj.mtl";
  plain.width = tubes.width = 64;
  plain.height = tubes.height = 48;
  return {{"a.obj", GeometryFormat::kObj, mtl},    {"b.obj", GeometryFormat::kObj, tubes},
          {"c.ply", GeometryFormat::kPly, plain},  {"d.ply", GeometryFormat::kPly, ascii},
          {"e.ply", GeometryFormat::kPly, tubes},  {"f.glb", GeometryFormat::kGlb, plain},
          {"g.gltf", GeometryFormat::kGltf, tubes}, {"h.svg", GeometryFormat::kSvg, plain},
          {"i.png", GeometryFormat::kPng, plain}};
}

TEST(MemoryOutput, GeometryMemorySinkAndFileAreTheSameBytes) {
  TempDir dir;
  const Geometry g = sampleGeometry();
  for (Case c : geometryCases()) {
    SCOPED_TRACE(c.file);
    if (c.format == GeometryFormat::kObj && c.options.obj_mtl_name.empty())
      c.options.obj_mtl_name = std::filesystem::path(c.file).replace_extension(".mtl").string();
    writeGeometry(g, dir / c.file, c.options);
    const std::string file = readText(dir / c.file);
    ASSERT_FALSE(file.empty());
    EXPECT_EQ(str(encodeGeometry(g, c.format, c.options)), file);
    RecordingSink sink;
    writeGeometry(g, c.format, sink, c.options);
    EXPECT_EQ(sink.bytes_, file);
    EXPECT_EQ(sink.finished_, 1);
    if (c.format == GeometryFormat::kObj) {
      EXPECT_NE(file.find("mtllib " + c.options.obj_mtl_name + "\n"), std::string::npos);
      RecordingSink materials;
      writeObjMaterials(g, materials);
      EXPECT_EQ(readText(dir / c.options.obj_mtl_name), materials.bytes_);
      EXPECT_NE(materials.bytes_.find("newmtl color_0"), std::string::npos);
    }
  }
}

TEST(MemoryOutput, ObjInMemoryHasNoMaterialsUnlessNamed) {
  const std::string obj = str(encodeGeometry(sampleGeometry(), GeometryFormat::kObj));
  EXPECT_EQ(obj.find("mtllib"), std::string::npos);
  EXPECT_EQ(obj.find("usemtl"), std::string::npos);
}

TEST(MemoryOutput, ImagesVolumesAndPointsToo) {
  TempDir dir;
  std::vector<uint16_t> px(5 * 3 * 2);
  for (size_t i = 0; i < px.size(); ++i) px[i] = uint16_t(i * 2000);
  const ImageView image{px.data(), 5, 3, 2, 16, 0};
  writePng(image, dir / "x.png");
  EXPECT_EQ(readText(dir / "x.png"), str(encodePng(image)));

  std::vector<float> field(2 * 3 * 4, 0.5f);
  VolumeView volume;
  volume.values = field.data();
  volume.dims = {2, 3, 4};
  writeVolume(volume, dir / "v.raw");
  EXPECT_EQ(readText(dir / "v.raw"), str(encodeVolumeRaw(volume)));
  EXPECT_EQ(readText(dir / "v.json"), volumeJson(volume, "v.raw"));

  std::vector<Vec3> pts = {{1, 2, 3}, {4, 5, 6}};
  PointSetView points;
  points.count = 2;
  points.positions = pts.data();
  for (bool ascii : {false, true}) {
    writePointsPly(points, dir / "p.ply", PointWriteOptions{ascii});
    EXPECT_EQ(readText(dir / "p.ply"), str(encodePointsPly(points, PointWriteOptions{ascii})));
  }
}

TEST(MemoryOutput, AFailingSinkIsAnOutputErrorFromEveryWriter) {
  const Geometry g = sampleGeometry();
  for (const Case& c : geometryCases()) {
    for (size_t fail_after : {size_t{0}, size_t{100}}) {
      RecordingSink sink(fail_after);
      try {
        writeGeometry(g, c.format, sink, c.options);
        ADD_FAILURE() << c.file << ": no error";
      } catch (const OutputError& e) {
        EXPECT_NE(std::string(e.what()).find("recording"), std::string::npos) << c.file << ": " << e.what();
      }
      EXPECT_EQ(sink.finished_, 0) << c.file;
    }
  }
  uint8_t px[12] = {};
  RecordingSink png(10);
  EXPECT_THROW(encodePng(ImageView{px, 2, 2, 3, 8, 0}, png), OutputError);
  // Outputs over the 1 MiB write buffer reach the sink while libpng and
  // tinygltf are still running: the error must cross libpng's longjmp and
  // tinygltf's std::ostream intact.
  std::vector<uint8_t> noise(700 * 600 * 3);
  for (size_t i = 0; i < noise.size(); ++i) noise[i] = uint8_t((i * 2654435761u) >> 13);
  RecordingSink big_png(1000);
  EXPECT_THROW(encodePng(ImageView{noise.data(), 700, 600, 3, 8, 0}, big_png, PngOptions{0, false}), OutputError);
  EXPECT_EQ(big_png.finished_, 0);
  WriteOptions tubes;
  tubes.cylinders = true;
  RecordingSink big_glb(1000);
  EXPECT_THROW(writeGeometry(kochCurve(6), GeometryFormat::kGlb, big_glb, tubes), OutputError);
  EXPECT_EQ(big_glb.finished_, 0);
  float v[8] = {};
  VolumeView volume;
  volume.values = v;
  volume.dims = {2, 2, 2};
  RecordingSink raw(4);
  EXPECT_THROW(writeVolumeRaw(volume, raw), OutputError);
  Vec3 p[1];
  PointSetView points;
  points.count = 1;
  points.positions = p;
  RecordingSink ply(20);
  EXPECT_THROW(writePointsPly(points, ply), OutputError);
}

TEST(MemoryOutput, BadPathsAreOutputErrors) {
  TempDir dir;
  const std::filesystem::path missing = dir / "no" / "such" / "dir";
  const Geometry g = sampleGeometry();
  for (const Case& c : geometryCases()) EXPECT_THROW(writeGeometry(g, missing / c.file, c.options), OutputError) << c.file;
  uint8_t px[3] = {};
  EXPECT_THROW(writePng(ImageView{px, 1, 1, 3, 8, 0}, missing / "x.png"), OutputError);
  float v[1] = {};
  VolumeView volume;
  volume.values = v;
  volume.dims = {1, 1, 1};
  EXPECT_THROW(writeVolume(volume, missing / "v.raw"), OutputError);
  Vec3 p[1];
  PointSetView points;
  points.count = 1;
  points.positions = p;
  EXPECT_THROW(writePointsPly(points, missing / "p.ply"), OutputError);
  EXPECT_THROW(FileSink(dir.path()), OutputError);  // a directory is not writable as a file
}

}  // namespace
}  // namespace procgen::iotest
