// The studio's noise endpoints (issue 20). PLACEHOLDER: being written.
#include "studio/api.hpp"

namespace procgen::studio {

void registerNoiseEndpoints(Api& api) { (void)api; }

}  // namespace procgen::studio
