// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The analysis layers' registry and the bus. */
#include <string.h>

#include "analyze/layer.h"
#include "harness.h"

TEST(layer_registry)
{
	uint16_t types[16];
	size_t n = it_analysis_chunk_types(types, 16);

	ASSERT_EQ(it_analysis_nlayers, 5, "block, syscall, fabric, uprobe, fs");
	ASSERT_STREQ(it_analysis_layers[0]->name, "block", "block first: the report's frame");
	ASSERT_TRUE(it_analysis_layers[0]->always, "block is built for every trace");
	ASSERT_STREQ(it_analysis_layers[1]->name, "syscall", "then syscall");
	ASSERT_EQ(it_analysis_layers[1]->layer, IT_LAYER_SYSCALL, "layer id");
	ASSERT_STREQ(it_analysis_layers[2]->name, "fabric", "then the fabric join, after block");
	ASSERT_EQ(it_analysis_layers[2]->layer, IT_LAYER_NVMET, "built for traces with the nvmet layer");
	ASSERT_STREQ(it_analysis_layers[3]->name, "uprobe", "then the probes, after block (trails)");
	ASSERT_STREQ(it_analysis_layers[4]->name, "fs", "then the extents snapshots");
	for (size_t i = 0; i < it_analysis_nlayers; i++) {
		const struct it_analysis_layer *l = it_analysis_layers[i];
		ASSERT_TRUE(l->new && l->feed && l->finish && l->report_text && l->report_json &&
			    l->free, "every layer has the mandatory ops");
	}
	/* EVENTS, SYSSIDE, SYSCALLS, UPROBE_DEFS, UPROBE_HITS, FS_EXTENTS, FS_F2FS,
	 * once each (losses: the reader's DROPS) */
	ASSERT_EQ(n, 7, "chunk types without repeats");
	ASSERT_EQ(types[0], IT_CHUNK_EVENTS, "block's");
}

static void count(const void *msg, void *ctx)
{
	*(uint64_t *)ctx += *(const uint64_t *)msg;
}

TEST(layer_bus)
{
	struct it_bus b = { 0 };
	uint64_t x = 0, y = 0, v = 5;

	ASSERT_TRUE(!it_bus_wanted(&b, IT_BUS_TRAIL_DONE), "no subscriber");
	ASSERT_EQ(it_bus_subscribe(&b, IT_BUS_BLOCK_WATERMARK, count, &x), 0, "sub");
	ASSERT_EQ(it_bus_subscribe(&b, IT_BUS_BLOCK_WATERMARK, count, &y), 0, "sub");
	ASSERT_TRUE(it_bus_wanted(&b, IT_BUS_BLOCK_WATERMARK), "wanted");
	it_bus_publish(&b, IT_BUS_BLOCK_WATERMARK, &v);
	it_bus_publish(&b, IT_BUS_TRAIL_DONE, &v); /* nobody listens */
	ASSERT_EQ(x, 5, "first subscriber");
	ASSERT_EQ(y, 5, "second subscriber");
	for (unsigned i = 2; i < IT_BUS_SUBS; i++)
		ASSERT_EQ(it_bus_subscribe(&b, IT_BUS_BLOCK_WATERMARK, count, &x), 0, "sub");
	ASSERT_EQ(it_bus_subscribe(&b, IT_BUS_BLOCK_WATERMARK, count, &x), -1, "topic full");
}
