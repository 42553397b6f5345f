// Lookup over the files embedded at build time (the generated table of
// cmake/embed_assets.cmake: the page bundle from web/ and the examples).
#include "studio/api.hpp"

namespace procgen::studio {

// Defined in the generated studio_assets.cpp (a few dozen files: a linear scan).
extern const Asset kEmbeddedAssets[];
extern const size_t kEmbeddedAssetCount;

const Asset* findAsset(std::string_view path) {
  for (size_t i = 0; i < kEmbeddedAssetCount; ++i)
    if (std::string_view(kEmbeddedAssets[i].path) == path) return &kEmbeddedAssets[i];
  return nullptr;
}

std::vector<const Asset*> assetsUnder(std::string_view prefix) {
  std::vector<const Asset*> out;
  for (size_t i = 0; i < kEmbeddedAssetCount; ++i)
    if (std::string_view(kEmbeddedAssets[i].path).starts_with(prefix)) out.push_back(&kEmbeddedAssets[i]);
  return out;
}

}  // namespace procgen::studio
