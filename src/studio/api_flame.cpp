// The studio's flame endpoints (issue 20). PLACEHOLDER: being written.
#include "studio/api.hpp"

namespace procgen::studio {

void registerFlameEndpoints(Api& api) { (void)api; }

}  // namespace procgen::studio
