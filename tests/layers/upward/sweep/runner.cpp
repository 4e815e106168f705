// A workflow that includes a sibling workflow: refused too.
#include "calibrate/calibration.hpp"
