/* SPDX-License-Identifier: Apache-2.0
 * A replica's start-up as its parts (models/startup.h), summed by hand for
 * the vllm profile at TP 4: a 70B model's 140 GB of weights and 80 layers on
 * a new cloud node, cold, then with the image pre-pulled and torch.compile
 * cached; the parts that grow with TP grow as engines.json says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "models/engine.h"
#include "models/startup.h"

#include <math.h>

static void near(double got, double want, const char *what)
{
	if (fabs(got - want) > 1e-9 * (fabs(want) + 1.0))
		fail_msg("%s: %.12g (expected %.12g)", what, got, want);
}

static const struct engine_startup *vllm_startup(struct engine_table *t)
{
	struct diag d;
	diag_init(&d);
	if (engine_table_load(t, NULL, &d) != 0)
		fail_msg("%s", d.msg);
	const struct engine_profile *e = engine_find(t, "vllm");
	assert_non_null(e);
	/* the figures the sums below were worked out with (engines.json) */
	const struct engine_startup *s = &e->startup;
	assert_true(s->image_gb == 12.0 && s->engine_start_s == 16.0);
	assert_true(s->engine_start_per_gpu_s == 2.0);
	assert_true(s->compile_cold_s == 27.2 && s->compile_cached_s == 9.2);
	assert_true(s->cuda_graph_s_per_layer == 0.39 && s->cuda_graph_tp_growth == 0.13);
	assert_true(s->warmup_s == 1.0 && s->keep_alive_s == -1.0);
	return s;
}

/* TP 4, 140e9 bytes, 80 layers; a new node: 120 s provisioning, the image
 * pulled at 0.037 GB/s, 1 GB/s per GPU from storage.
 *   provision    120
 *   image pull   12 / 0.037                 = 324.324324...
 *   engine start 16 + 2 x 3                 =  22
 *   weight load  140e9 / (4 x 1e9)          =  35
 *   compile      cold                       =  27.2
 *   CUDA graphs  0.39 x 80 x (1 + 0.13 x 3) =  43.368
 *   warm-up                                 =   1
 *   total                                   = 572.892324...
 * Pre-pulled and cached: 120 + 0 + 22 + 35 + 9.2 + 43.368 + 1 = 230.568. */
static void test_tp4_by_hand(void **state)
{
	(void)state;
	static struct engine_table t;
	const struct engine_startup *e = vllm_startup(&t);
	struct startup_opts o = {.provision_s = 120, .image_pull_gbs = 0.037,
				 .storage_gbs = 1.0};
	struct startup_parts p;
	startup_parts(e, &o, 140e9, 80, 4, 1, &p);
	near(p.provision_s, 120, "provision");
	near(p.image_pull_s, 12.0 / 0.037, "image pull");
	near(p.engine_start_s, 22, "engine start");
	near(p.weight_load_s, 35, "weight load");
	near(p.compile_s, 27.2, "compile");
	near(p.cuda_graph_s, 43.368, "CUDA graphs");
	near(p.warmup_s, 1, "warm-up");
	near(p.total_s, 120 + 12.0 / 0.037 + 22 + 35 + 27.2 + 43.368 + 1, "total");
	near(p.total_s, 572.8923243243243, "total, worked out");
	near(p.server_s, 120 + 12.0 / 0.037, "server");
	near(p.model_load_s, 22 + 35 + 27.2 + 43.368 + 1, "model load");

	o.image_prepulled = true;
	o.compile_cache = true;
	startup_parts(e, &o, 140e9, 80, 4, 1, &p);
	near(p.image_pull_s, 0, "image pull, pre-pulled");
	near(p.compile_s, 9.2, "compile, cached");
	near(p.total_s, 230.568, "total, pre-pulled and cached");

	/* a node already up: no provisioning either */
	o.provision_s = 0;
	startup_parts(e, &o, 140e9, 80, 4, 1, &p);
	near(p.total_s, 110.568, "total on a running node");

	/* the same model at TP 1 (were it to fit) and TP 8: TP grows engine
	 * start and graph capture, shrinks the weights' share per GPU, leaves
	 * the compile alone */
	struct startup_parts p1, p8;
	startup_parts(e, &o, 140e9, 80, 1, 1, &p1);
	startup_parts(e, &o, 140e9, 80, 8, 1, &p8);
	near(p1.engine_start_s, 16, "engine start, TP 1");
	near(p8.engine_start_s, 30, "engine start, TP 8");
	near(p1.cuda_graph_s, 31.2, "graphs, TP 1");
	near(p8.cuda_graph_s, 0.39 * 80 * 1.91, "graphs, TP 8");
	near(p1.weight_load_s, 140, "weights, TP 1");
	near(p8.weight_load_s, 17.5, "weights, TP 8");
	near(p8.compile_s, p1.compile_s, "compile, any TP");
	/* two pipeline stages capture their 40 layers each, at once */
	struct startup_parts pp2;
	startup_parts(e, &o, 140e9, 80, 4, 2, &pp2);
	near(pp2.cuda_graph_s, 0.39 * 40 * 1.39, "graphs, PP 2");
	near(pp2.engine_start_s, 16 + 2 * 7, "engine start, 8 GPUs");
}

/* Ollama loads on demand: its model load is what a call pays after an
 * unload; llama.cpp's figures (no compile, no graphs) come with it. */
static void test_ollama_model_load(void **state)
{
	(void)state;
	static struct engine_table t;
	struct diag d;
	diag_init(&d);
	assert_int_equal(engine_table_load(&t, NULL, &d), 0);
	const struct engine_profile *o = engine_find(&t, "ollama");
	assert_non_null(o);
	struct startup_opts so = {.provision_s = 0, .image_pull_gbs = 0.037, .image_prepulled = true,
				  .storage_gbs = 2.0};
	struct startup_parts p;
	startup_parts(&o->startup, &so, 4.9e9, 32, 1, 1, &p);
	/* 1 s runner start + 4.9 GB / 2 GB/s + 1 s warm-up */
	near(p.model_load_s, 1.0 + 2.45 + 1.0, "ollama model load");
	near(p.compile_s + p.cuda_graph_s, 0, "no compile, no graphs");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tp4_by_hand),
		cmocka_unit_test(test_ollama_model_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
