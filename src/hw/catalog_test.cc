// Tests of the shipped catalog (data/): each seed's VM sizes carry the seed's numbers, every GPU
// number has a source, and names resolve with or without "Standard_", in any case, by alias,
// with "did you mean" for near misses. Expected values are copied from the seed tables cited.
#include "hw/catalog.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/units.h"
#include "core/yaml.h"
#include "hw/load.h"

namespace ndt {
namespace {

class CatalogTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    StatusOr<Catalog> c = Catalog::Load(NDT_DATA_DIR);
    ASSERT_TRUE(c.ok()) << c.status().message();
    catalog_ = new Catalog(std::move(c).value());
  }
  static void TearDownTestSuite() {
    delete catalog_;
    catalog_ = nullptr;
  }
  static const SkuSpec& Sku(const std::string& name) {
    StatusOr<const SkuSpec*> s = catalog_->FindSku(name);
    NDT_CHECK(s.ok(), s.status().message());
    return **s;
  }
  static Catalog* catalog_;
};
Catalog* CatalogTest::catalog_ = nullptr;

TEST_F(CatalogTest, SetPriceOverridesOneCopyAndNamesUnknownSizes) {
  Catalog copy = *catalog_;
  PriceSpec p;
  p.usd_per_hour = 100;
  p.source = "--price-per-hour";
  ASSERT_TRUE(copy.SetPrice("ND96isr_H200_v5", p).ok());
  const SkuSpec& h200 = **copy.FindSku("Standard_ND96isr_H200_v5");
  ASSERT_TRUE(h200.price.has_value());
  EXPECT_EQ(h200.price->usd_per_hour, 100);
  EXPECT_TRUE(h200.price_note.empty());
  EXPECT_FALSE(Sku("Standard_ND96isr_H200_v5").price.has_value());  // the original is untouched
  EXPECT_EQ(copy.SetPrice("ND97", p).code(), StatusCode::kNotFound);
}

TEST_F(CatalogTest, HasEveryGpuAndSize) {
  EXPECT_EQ(catalog_->gpus().size(), 10u);
  EXPECT_EQ(catalog_->skus().size(), 17u);
}

// Seed 000 table: | Standard_ND96amsr_A100_v4 | 96 | 1900 | 6400 | 8 A100 80 GB GPUs (NVLink 3.0)
// | 80 | 32 | 80,000 / 800 | 24,000 Mbps | 8 |; "InfiniBand: Supported, GPUDirect RDMA,
// 8 x 200 Gigabit HDR".
TEST_F(CatalogTest, NdmA100V4CarriesSeed000Table) {
  const SkuSpec& s = Sku("Standard_ND96amsr_A100_v4");
  EXPECT_EQ(s.vcpus, 96);
  EXPECT_DOUBLE_EQ(s.memory_bytes, 1900 * kGiB);
  EXPECT_DOUBLE_EQ(s.temp_storage_bytes, 6400 * kGiB);
  EXPECT_EQ(s.gpus, 8);
  EXPECT_EQ(s.gpu, "A100-SXM4-80GB");
  EXPECT_DOUBLE_EQ(s.gpu_memory_bytes, 80 * kGiB);
  EXPECT_EQ(s.max_data_disks, 32);
  EXPECT_EQ(s.max_uncached_disk_iops, 80000);
  EXPECT_DOUBLE_EQ(*s.max_uncached_disk_Bps, 800 * kMB);  // "800 MBps"
  EXPECT_DOUBLE_EQ(*s.max_network_Bps, 24000 * kMbit);    // 24,000 Mbps = 3e9 B/s
  EXPECT_EQ(s.max_nics, 8);
  ASSERT_TRUE(s.infiniband.has_value());
  EXPECT_EQ(s.infiniband->ports, 8);
  EXPECT_DOUBLE_EQ(s.infiniband->port_Bps, 200 * kGbit);  // 200 Gb/s = 25 GB/s, not 200 GB/s
  EXPECT_EQ(s.infiniband->generation, "HDR");
  EXPECT_TRUE(s.infiniband->gpudirect_rdma);
  EXPECT_EQ(s.features.at("live_migration"), "Not Supported");
  EXPECT_EQ(s.features.at("vm_generation_support"), "Generation 2");
  EXPECT_EQ(s.features.at("nested_virtualization"), "Not Supported");
  EXPECT_EQ(s.features.at("ultra_disks"), "Supported");
  EXPECT_EQ(s.features.size(), 11u);  // the seed lists 11 flags
  EXPECT_EQ(s.supported_os.size(), 4u);
  EXPECT_EQ(s.fabric, IntraVmFabric::kNvswitch);
  EXPECT_EQ(s.nvswitches, 6);
  EXPECT_EQ(s.pcie_switches * s.gpus_per_pcie_switch, 8);  // 4 x 2 (ndv4-topo.xml)
  EXPECT_EQ(s.nic_affinity, NicAffinity::kPerGpu);
  EXPECT_FALSE(s.conflicts.empty());  // "200 GB/s" HDR
  ASSERT_TRUE(s.price.has_value());
  EXPECT_DOUBLE_EQ(s.price->usd_per_hour, 32.77);  // prices.csv eastus
  EXPECT_EQ(s.price->region, "eastus");
}

// Seed 001 table: | Standard_ND40rs_v2 | 40 | 672 | 2948 | 8 V100 32 GB (NVLink) | 32 | 32 |
// 80000 / 800 | 24000 Mbps | 8 |; "100-Gigabit InfiniBand EDR".
TEST_F(CatalogTest, Ndv2CarriesSeed001Table) {
  const SkuSpec& s = Sku("Standard_ND40rs_v2");
  EXPECT_EQ(s.vcpus, 40);
  EXPECT_DOUBLE_EQ(s.memory_bytes, 672 * kGiB);
  EXPECT_DOUBLE_EQ(s.temp_storage_bytes, 2948 * kGiB);
  EXPECT_EQ(s.gpus, 8);
  EXPECT_EQ(s.gpu, "V100-SXM2-32GB");
  EXPECT_DOUBLE_EQ(s.gpu_memory_bytes, 32 * kGiB);
  EXPECT_EQ(s.max_data_disks, 32);
  EXPECT_EQ(s.max_uncached_disk_iops, 80000);
  EXPECT_DOUBLE_EQ(*s.max_network_Bps, 24000 * kMbit);
  EXPECT_EQ(s.max_nics, 8);
  EXPECT_EQ(s.infiniband->ports, 1);
  EXPECT_DOUBLE_EQ(s.infiniband->port_Bps, 100 * kGbit);
  EXPECT_EQ(s.fabric, IntraVmFabric::kNvlinkCubeMesh);
  EXPECT_EQ(s.nic_affinity, NicAffinity::kPerVm);
  EXPECT_EQ(s.features.at("premium_storage"), "Supported");
  EXPECT_EQ(s.features.at("memory_preserving_updates"), "Not Supported");
  // Seed 002 claims 128 GB (8 x 16 GB); the catalog keeps seed 001's 32 GB and says why.
  ASSERT_EQ(s.conflicts.size(), 1u);
  EXPECT_EQ(s.conflicts[0].field, "gpu_memory");
}

// Seed 002 table: ND6 6/112 GB/1 x V100/16 GB; ND12 12/224/2/32; ND24 24/448/4/64 (GPU memory
// per VM, so 16 GB per GPU); Network: InfiniBand.
TEST_F(CatalogTest, Seed002SizesAsTheSeedStatesThem) {
  struct Row {
    const char* name;
    int vcpus, mem_gb, gpus, vm_gpu_mem_gb;
  };
  for (const Row& r :
       {Row{"ND6", 6, 112, 1, 16}, Row{"ND12", 12, 224, 2, 32}, Row{"ND24", 24, 448, 4, 64}}) {
    const SkuSpec& s = Sku(r.name);
    EXPECT_EQ(s.name, r.name);
    EXPECT_EQ(s.series, "ND (seed 002)");
    EXPECT_EQ(s.vcpus, r.vcpus);
    EXPECT_DOUBLE_EQ(s.memory_bytes, r.mem_gb * kGiB);
    EXPECT_EQ(s.gpus, r.gpus);
    EXPECT_EQ(s.gpu, "V100-SXM2-16GB");
    EXPECT_DOUBLE_EQ(s.gpu_memory_bytes * s.gpus, r.vm_gpu_mem_gb * kGiB);
    EXPECT_TRUE(s.infiniband.has_value());
    EXPECT_EQ(s.fabric, IntraVmFabric::kPcie);
    EXPECT_EQ(s.nvlink_domain_gpus, 1);
    EXPECT_GE(s.conflicts.size(), 2u);  // P40 vs V100; per-VM memory column
    EXPECT_FALSE(s.price.has_value());
  }
}

// Seed 003 table: NG8 8/112/1 x A100/40 GB/"InfiniBand / 25 Gbps"; NG16 16/224/2/80/50;
// NG32 32/448/4/160/100.
TEST_F(CatalogTest, Seed003SizesAsTheSeedStatesThem) {
  struct Row {
    const char* name;
    int vcpus, mem_gb, gpus, net_gbps;
  };
  for (const Row& r :
       {Row{"NG8", 8, 112, 1, 25}, Row{"NG16", 16, 224, 2, 50}, Row{"NG32", 32, 448, 4, 100}}) {
    const SkuSpec& s = Sku(r.name);
    EXPECT_EQ(s.vcpus, r.vcpus);
    EXPECT_DOUBLE_EQ(s.memory_bytes, r.mem_gb * kGiB);
    EXPECT_EQ(s.gpus, r.gpus);
    EXPECT_EQ(s.gpu, "A100-SXM4-40GB");
    EXPECT_DOUBLE_EQ(s.gpu_memory_bytes, 40 * kGiB);
    EXPECT_DOUBLE_EQ(*s.max_network_Bps, r.net_gbps * kGbit);
    EXPECT_EQ(s.conflicts[0].other, "not documented by Azure");
  }
}

// Seed 004: "Each rack contains 18 VMs (72 GPUs)", "4 Blackwell Ultra GPUs" per VM,
// "800 Gb/s per GPU cross-rack InfiniBand".
TEST_F(CatalogTest, Gb300CarriesSeed004Facts) {
  const SkuSpec& s = Sku("Standard_ND128isr_GB300_v6");
  EXPECT_EQ(s.gpus, 4);
  EXPECT_EQ(s.gpu, "GB300");
  EXPECT_EQ(s.vcpus, 128);
  EXPECT_EQ(s.fabric, IntraVmFabric::kNvl72);
  EXPECT_EQ(s.nvlink_domain_gpus, 72);
  EXPECT_EQ(s.vms_per_nvlink_domain, 18);
  EXPECT_EQ(s.nvswitches, 18);
  EXPECT_EQ(s.infiniband->ports, 4);
  EXPECT_DOUBLE_EQ(s.infiniband->port_Bps, 800 * kGbit);
  EXPECT_EQ(s.nic_affinity, NicAffinity::kPerGpuC2c);
  EXPECT_EQ(s.conflicts[0].field, "infiniband.port_bw");
  EXPECT_EQ(&Sku("Standard_ND128isrG5_GB300_v6"), &s);
}

TEST_F(CatalogTest, OriginalNdSeriesIsP40PerAzureDocs) {
  const SkuSpec& s = Sku("Standard_ND24rs");
  EXPECT_EQ(s.gpu, "Tesla P40");
  EXPECT_EQ(s.gpus, 4);
  EXPECT_TRUE(s.infiniband.has_value());
  EXPECT_FALSE(Sku("Standard_ND24s").infiniband.has_value());
  EXPECT_EQ(Sku("Standard_ND24s").nic_affinity, NicAffinity::kNone);
}

TEST_F(CatalogTest, Hopper8GpuSizesHaveOneNicAndOneGpuPerPcieSwitch) {
  for (const char* name : {"Standard_ND96isr_H100_v5", "Standard_ND96isr_H200_v5"}) {
    const SkuSpec& s = Sku(name);
    EXPECT_EQ(s.pcie_switches, 8);
    EXPECT_EQ(s.gpus_per_pcie_switch, 1);
    EXPECT_EQ(s.nvswitches, 4);
    EXPECT_DOUBLE_EQ(s.infiniband->port_Bps, 400 * kGbit);
  }
}

TEST_F(CatalogTest, EveryGpuNumberHasASource) {
  for (const GpuSpec& g : catalog_->gpus()) {
    for (const char* k : {"sm_version", "memory", "memory_bw", "fp32", "tdp", "pcie_bw"}) {
      ASSERT_TRUE(g.sources.count(k)) << g.name << " " << k;
    }
    for (const auto& [field, src] : g.sources) EXPECT_FALSE(src.empty()) << g.name << field;
    if (g.nvlink_gen > 0) {
      EXPECT_FALSE(g.sources.at("nvlink_link_bw").empty());
    }
  }
}

TEST_F(CatalogTest, NvlinkPerDirectionBandwidths) {
  // V100 6 x 25, A100 12 x 25, H100 18 x 25, Blackwell 18 x 50 GB/s per direction.
  auto nv = [&](const char* name) { return (*catalog_->FindGpu(name))->nvlink_Bps(); };
  EXPECT_DOUBLE_EQ(nv("V100-SXM2-32GB"), 150 * kGB);
  EXPECT_DOUBLE_EQ(nv("A100-SXM4-80GB"), 300 * kGB);
  EXPECT_DOUBLE_EQ(nv("H100-SXM5-80GB"), 450 * kGB);
  EXPECT_DOUBLE_EQ(nv("H200-141GB"), 450 * kGB);
  EXPECT_DOUBLE_EQ(nv("GB200"), 900 * kGB);
  EXPECT_DOUBLE_EQ(nv("GB300"), 900 * kGB);
  EXPECT_DOUBLE_EQ(nv("Tesla P40"), 0);
}

TEST_F(CatalogTest, GpuPeaksAndVersions) {
  const GpuSpec& a100 = **catalog_->FindGpu("A100-SXM4-80GB");
  EXPECT_DOUBLE_EQ(a100.PeakFlops(Precision::kBf16), 312 * kTFLOP);
  EXPECT_EQ(a100.sm_version, 80);
  const GpuSpec& v100 = **catalog_->FindGpu("V100-SXM2-16GB");
  EXPECT_DOUBLE_EQ(v100.PeakFlops(Precision::kFp16), 125 * kTFLOP);
  EXPECT_EQ(v100.PeakFlops(Precision::kBf16), 0);  // no bf16 on Volta
  EXPECT_EQ((*catalog_->FindGpu("GB300"))->sm_version, 103);
  EXPECT_TRUE((*catalog_->FindGpu("GB200"))->c2c);
  EXPECT_EQ((*catalog_->FindGpu("p40"))->sm_version, 61);  // alias, any case
}

TEST_F(CatalogTest, EverySizesGpuResolves) {
  for (const SkuSpec& s : catalog_->skus()) {
    EXPECT_EQ(catalog_->GpuOf(s).name, (*catalog_->FindGpu(s.gpu))->name);
    EXPECT_FALSE(s.sources.empty()) << s.name;
    EXPECT_TRUE(s.price.has_value() || !s.price_note.empty()) << s.name;
  }
}

TEST_F(CatalogTest, LookupIgnoresCaseAndStandardPrefix) {
  const SkuSpec* want = &Sku("Standard_ND96amsr_A100_v4");
  EXPECT_EQ(&Sku("ND96amsr_A100_v4"), want);
  EXPECT_EQ(&Sku("standard_nd96amsr_a100_v4"), want);
  EXPECT_EQ(&Sku("nd96AMSR_a100_V4"), want);
  EXPECT_EQ(&Sku("NDm A100 v4"), want);  // alias
  EXPECT_EQ(&Sku("Standard_ND6"), &Sku("ND6"));
}

TEST_F(CatalogTest, UnknownSizeSuggestsTheClosest) {
  StatusOr<const SkuSpec*> s = catalog_->FindSku("ND96amsr_A100v4");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(s.status().message(),
            "unknown VM size 'ND96amsr_A100v4'; did you mean 'Standard_ND96amsr_A100_v4'? "
            "(see: ndtwin sku list)");
  StatusOr<const SkuSpec*> far = catalog_->FindSku("XYZ");
  EXPECT_EQ(far.status().message(), "unknown VM size 'XYZ' (see: ndtwin sku list)");
}

TEST_F(CatalogTest, UnknownGpuIsNotFound) {
  StatusOr<const GpuSpec*> g = catalog_->FindGpu("A100-SXM4-81GB");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kNotFound);
  EXPECT_NE(g.status().message().find("did you mean"), std::string::npos);
}

// Copies data/gpus/*.yaml, data/vms/*.yaml and data/prices.yaml into `dir`, creating the files
// of each folder in file-name order or its reverse. A directory lists its entries in an order of
// the file system's own (creation order on tmpfs, name-hash order on ext4), never by name.
void CopyData(const std::filesystem::path& dir, bool reversed) {
  namespace fs = std::filesystem;
  for (const char* sub : {"gpus", "vms"}) {
    std::vector<fs::path> files;
    for (const fs::directory_entry& e : fs::directory_iterator(fs::path(NDT_DATA_DIR) / sub)) {
      if (e.path().extension() == ".yaml") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    if (reversed) std::reverse(files.begin(), files.end());
    fs::create_directories(dir / sub);
    for (const fs::path& f : files) fs::copy_file(f, dir / sub / f.filename());
  }
  fs::copy_file(fs::path(NDT_DATA_DIR) / "prices.yaml", dir / "prices.yaml");
}

// The names in data/<sub>/*.yaml in file-name order, each file parsed on its own.
std::vector<std::string> NamesInFileOrder(const char* sub) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(fs::path(NDT_DATA_DIR) / sub)) {
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> out;
  for (const fs::path& f : files) {
    StatusOr<YamlMap> m = LoadYamlMapFile(f.string());
    NDT_CHECK(m.ok(), m.status().message());
    if (std::string(sub) == "gpus") {
      out.push_back(ParseGpu(*m)->name);
    } else {
      out.push_back(ParseSku(*m)->name);
    }
  }
  return out;
}

// Two copies of data/ whose files were created in opposite orders load the same catalog, and in
// both the GPUs and VM sizes come in file-name order (catalog.cc sorts the listing), whatever
// order the file system lists them in: `sku list`, `plan` and every table follow this order.
TEST_F(CatalogTest, LoadIsIndependentOfTheDirectoryListingOrder) {
  namespace fs = std::filesystem;
  const fs::path root =
      fs::path(::testing::TempDir()) / ("ndt_catalog_order." + std::to_string(::getpid()));
  fs::remove_all(root);
  CopyData(root / "forward", false);
  CopyData(root / "reversed", true);
  StatusOr<Catalog> fwd = Catalog::Load((root / "forward").string());
  StatusOr<Catalog> rev = Catalog::Load((root / "reversed").string());
  ASSERT_TRUE(fwd.ok()) << fwd.status().message();
  ASSERT_TRUE(rev.ok()) << rev.status().message();
  auto gpu_names = [](const Catalog& c) {
    std::vector<std::string> n;
    for (const GpuSpec& g : c.gpus()) n.push_back(g.name);
    return n;
  };
  auto sku_names = [](const Catalog& c) {
    std::vector<std::string> n;
    for (const SkuSpec& s : c.skus()) n.push_back(s.name);
    return n;
  };
  const std::vector<std::string> gpus = NamesInFileOrder("gpus");
  const std::vector<std::string> skus = NamesInFileOrder("vms");
  ASSERT_EQ(gpus.size(), 10u);  // HasEveryGpuAndSize
  ASSERT_EQ(skus.size(), 17u);
  EXPECT_EQ(gpu_names(*fwd), gpus);
  EXPECT_EQ(gpu_names(*rev), gpus);
  EXPECT_EQ(sku_names(*fwd), skus);
  EXPECT_EQ(sku_names(*rev), skus);
  EXPECT_EQ(sku_names(*catalog_), skus);
  fs::remove_all(root);
}

}  // namespace
}  // namespace ndt

namespace ndt {
namespace {

TEST(DefaultDataDirTest, EnvironmentOverridesTheCompiledInDirectory) {
  const char* old = std::getenv("NDTWIN_DATA");
  std::string saved = old ? old : "";
  setenv("NDTWIN_DATA", "/tmp/ndtwin-data-test", 1);
  EXPECT_EQ(Catalog::DefaultDataDir(), "/tmp/ndtwin-data-test");
  unsetenv("NDTWIN_DATA");
  EXPECT_EQ(Catalog::DefaultDataDir(), NDT_DATA_DIR);
  if (old) setenv("NDTWIN_DATA", saved.c_str(), 1);
}

}  // namespace
}  // namespace ndt
