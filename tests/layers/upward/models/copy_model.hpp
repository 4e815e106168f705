// A cost model that reaches up into the reports: the layer check must refuse it.
#pragma once
#include "report/summary.hpp"
