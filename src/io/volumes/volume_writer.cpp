// Volumes as raw float32 + JSON sidecar (+ NRRD detached header). The raw file
// is the caller's buffer as is (the build targets little-endian hosts), so
// writing is one streamed copy; the sidecars are small text.
#include <bit>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "io/output_file.hpp"
#include "io/volumes/volume_check.hpp"
#include "procgen/error.hpp"
#include "procgen/volume.hpp"

namespace procgen {
namespace detail {

uint64_t checkedVolumeCount(const VolumeView& v) {
  auto bad = [](const std::string& why) { throw Error("volume: " + why, ExitCode::kUsage); };
  if (!v.values) bad("no values");
  uint64_t count = 1;
  for (int a = 0; a < 3; ++a) {
    if (v.dims[a] == 0) bad("every dimension must be at least 1");
    if (count > std::numeric_limits<uint64_t>::max() / 4 / v.dims[a]) bad("the size overflows 64 bits");
    count *= v.dims[a];
    if (!std::isfinite(v.spacing[a]) || !(v.spacing[a] > 0.0)) bad("spacing must be finite and positive");
    if (!std::isfinite(v.origin[a])) bad("origin must be finite");
  }
  return count;
}

}  // namespace detail

void writeVolumeRaw(const VolumeView& volume, ByteSink& sink) {
  static_assert(std::endian::native == std::endian::little, "raw volumes are written little-endian");
  const uint64_t count = detail::checkedVolumeCount(volume);
  io::OutputStream out(sink);
  // In slices of at most 64 Mi values, so a size_t byte count never overflows on 32-bit hosts.
  constexpr uint64_t kChunk = uint64_t{1} << 26;
  for (uint64_t at = 0; at < count; at += kChunk)
    out.write(volume.values + at, static_cast<size_t>(std::min(kChunk, count - at) * sizeof(float)));
  out.close();
}

std::vector<uint8_t> encodeVolumeRaw(const VolumeView& volume) {
  return io::writeToMemory([&](ByteSink& sink) { writeVolumeRaw(volume, sink); });
}

std::string volumeJson(const VolumeView& volume, std::string_view raw_file_name) {
  const uint64_t count = detail::checkedVolumeCount(volume);
  float lo = INFINITY, hi = -INFINITY;
  uint64_t non_finite = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const float v = volume.values[i];
    if (!std::isfinite(v)) {
      ++non_finite;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  nlohmann::ordered_json j;
  j["format"] = "procgen-volume";
  j["version"] = 1;
  j["data_file"] = std::string(raw_file_name);
  j["element_type"] = "float32";
  j["byte_order"] = "little_endian";
  j["header_bytes"] = 0;
  j["order"] = "x fastest, then y, then z";
  j["dims"] = volume.dims;
  j["spacing"] = volume.spacing;
  j["origin"] = volume.origin;
  if (lo <= hi) j["value_range"] = {lo, hi};
  else j["value_range"] = nullptr;
  j["non_finite_values"] = non_finite;
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string volumeNrrdHeader(const VolumeView& volume, std::string_view raw_file_name) {
  (void)detail::checkedVolumeCount(volume);
  std::ostringstream h;
  h.imbue(std::locale::classic());
  h.precision(17);
  h << "NRRD0004\n# procgen volume: float32, x fastest, then y, then z\ntype: float\ndimension: 3\n"
    << "space: 3D-right-handed\n"
    << "sizes: " << volume.dims[0] << ' ' << volume.dims[1] << ' ' << volume.dims[2] << '\n'
    << "space directions: (" << volume.spacing[0] << ",0,0) (0," << volume.spacing[1] << ",0) (0,0,"
    << volume.spacing[2] << ")\n"
    << "space origin: (" << volume.origin[0] << ',' << volume.origin[1] << ',' << volume.origin[2] << ")\n"
    << "encoding: raw\nendian: little\n"
    << "data file: " << raw_file_name << '\n';
  return h.str();
}

std::vector<std::filesystem::path> volumeFiles(const std::filesystem::path& path,
                                               const VolumeWriteOptions& options) {
  std::filesystem::path base = path;
  if (base.extension() == ".raw" || base.extension() == ".json" || base.extension() == ".nhdr")
    base.replace_extension();
  std::vector<std::filesystem::path> files;
  for (const char* ext : {".raw", ".json", ".nhdr"}) {
    if (std::string_view(ext) == ".nhdr" && !options.nrrd_header) break;
    files.push_back(base);
    files.back() += ext;
  }
  return files;
}

void writeVolume(const VolumeView& volume, const std::filesystem::path& path,
                 const VolumeWriteOptions& options) {
  (void)detail::checkedVolumeCount(volume);  // a bad view fails before any file is created
  const std::vector<std::filesystem::path> files = volumeFiles(path, options);
  const std::string raw_name = files[0].filename().string();
  auto text = [](const std::string& s) {
    return [&s](ByteSink& sink) {
      sink.write(s.data(), s.size());
      sink.finish();
    };
  };
  OutputTransaction all;  // the raw data never stays behind without its header and sidecar
  io::writeToFile(files[0], [&](ByteSink& sink) { writeVolumeRaw(volume, sink); });
  const std::string json = volumeJson(volume, raw_name);
  io::writeToFile(files[1], text(json));
  if (options.nrrd_header) {
    const std::string nhdr = volumeNrrdHeader(volume, raw_name);
    io::writeToFile(files[2], text(nhdr));
  }
  all.commit();
}

}  // namespace procgen
