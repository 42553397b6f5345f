// The studio's octree endpoints (issue 20). PLACEHOLDER: being written.
#include "studio/api.hpp"

namespace procgen::studio {

void registerOctreeEndpoints(Api& api) { (void)api; }

}  // namespace procgen::studio
