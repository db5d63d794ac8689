// The whole public API of pe-plan in one include. Link pe::importers (which brings
// pe::planner) when using it: the importer headers below belong to that library.
// docs/api.md walks through the types and calls.
#pragma once

// Core value types.
#include "pe/cluster.h"
#include "pe/error.h"
#include "pe/gpu.h"
#include "pe/model.h"
#include "pe/plan.h"
#include "pe/plan_layout.h"
#include "pe/schedule.h"
#include "pe/settings.h"
#include "pe/transformer.h"
#include "pe/units.h"

// Training plans: baselines, the search, reports.
#include "pe/baselines.h"
#include "pe/planner.h"
#include "pe/report.h"

// Timelines: simulation, bubbles, bubble filling, rendering, writing files.
#include "pe/bubbles.h"
#include "pe/fill.h"
#include "pe/output_file.h"
#include "pe/render.h"
#include "pe/timeline.h"

// Heterogeneous inference pipelines (PipeEdge's sched-pipeline problem).
#include "pe/edge.h"
#include "pe/edge_cost.h"
#include "pe/edge_export.h"

// Importers (pe::importers).
#include "pe/importers/cluster_yaml.h"
#include "pe/importers/pipedream_graph.h"
#include "pe/importers/pipeedge.h"
#include "pe/importers/profile_catalog.h"
#include "pe/importers/transformer_yaml.h"
#include "pe/importers/work_yaml.h"
