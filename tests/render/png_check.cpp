// png_check FILE.png [--min-ink F] [--min-colours N]: decodes a PNG (8-bit RGB or RGBA, not
// interlaced: what Chromium's --screenshot writes) and checks that it is not blank: at least a
// fraction F (default 0.03) of its pixels are not near-white and it holds at least N (default
// 8) distinct colours (to 4 bits a channel). Prints "WxH ink=F colours=N"; exit 0 when both
// hold, 1 when not, 2 when the file is not such a PNG.
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

namespace {

[[noreturn]] void bad(const std::string& file, const std::string& why) {
    std::fprintf(stderr, "png_check: %s: %s\n", file.c_str(), why.c_str());
    std::exit(2);
}

uint32_t be32(const unsigned char* p) {
    return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

int paeth(int a, int b, int c) {
    const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: png_check FILE.png [--min-ink F] [--min-colours N]\n");
        return 2;
    }
    const std::string file = argv[1];
    double min_ink = 0.03;
    size_t min_colours = 8;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--min-ink") == 0) min_ink = std::atof(argv[i + 1]);
        else if (std::strcmp(argv[i], "--min-colours") == 0) min_colours = static_cast<size_t>(std::atol(argv[i + 1]));
    }
    std::ifstream in(file, std::ios::binary);
    if (!in) bad(file, "cannot read");
    const std::vector<unsigned char> d((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    static const unsigned char kSig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (d.size() < 33 || std::memcmp(d.data(), kSig, 8) != 0) bad(file, "not a PNG");
    uint32_t w = 0, h = 0;
    int bpp = 0;
    std::vector<unsigned char> idat;
    for (size_t at = 8; at + 12 <= d.size();) {
        const uint32_t len = be32(&d[at]);
        if (at + 12 + len > d.size()) bad(file, "truncated chunk");
        const std::string type(reinterpret_cast<const char*>(&d[at + 4]), 4);
        const unsigned char* body = &d[at + 8];
        if (type == "IHDR") {
            w = be32(body);
            h = be32(body + 4);
            const int depth = body[8], colour = body[9], interlace = body[12];
            if (depth != 8 || (colour != 2 && colour != 6) || interlace != 0) bad(file, "not 8-bit RGB/RGBA, non-interlaced");
            bpp = colour == 2 ? 3 : 4;
        } else if (type == "IDAT") {
            idat.insert(idat.end(), body, body + len);
        } else if (type == "IEND") {
            break;
        }
        at += 12 + len;
    }
    if (w == 0 || h == 0 || bpp == 0) bad(file, "no image header");
    const size_t stride = static_cast<size_t>(w) * static_cast<size_t>(bpp);
    std::vector<unsigned char> raw((stride + 1) * h);
    uLongf raw_len = static_cast<uLongf>(raw.size());
    if (uncompress(raw.data(), &raw_len, idat.data(), static_cast<uLong>(idat.size())) != Z_OK || raw_len != raw.size())
        bad(file, "cannot inflate the image data");
    std::vector<unsigned char> img(stride * h), prev(stride, 0);
    for (uint32_t y = 0; y < h; ++y) {
        const unsigned char filter = raw[y * (stride + 1)];
        const unsigned char* src = &raw[y * (stride + 1) + 1];
        unsigned char* row = &img[y * stride];
        for (size_t x = 0; x < stride; ++x) {
            const int a = x >= static_cast<size_t>(bpp) ? row[x - static_cast<size_t>(bpp)] : 0, b = prev[x],
                      c = x >= static_cast<size_t>(bpp) ? prev[x - static_cast<size_t>(bpp)] : 0;
            int v = src[x];
            switch (filter) {
                case 0: break;
                case 1: v += a; break;
                case 2: v += b; break;
                case 3: v += (a + b) / 2; break;
                case 4: v += paeth(a, b, c); break;
                default: bad(file, "unknown row filter");
            }
            row[x] = static_cast<unsigned char>(v & 0xff);
        }
        std::memcpy(prev.data(), row, stride);
    }
    size_t ink = 0;
    std::set<uint32_t> colours;
    for (size_t i = 0; i < static_cast<size_t>(w) * h; ++i) {
        const unsigned char* px = &img[i * static_cast<size_t>(bpp)];
        if (px[0] < 235 || px[1] < 235 || px[2] < 235) ++ink;
        colours.insert((uint32_t{px[0]} >> 4) << 8 | (uint32_t{px[1]} >> 4) << 4 | (uint32_t{px[2]} >> 4));
    }
    const double share = static_cast<double>(ink) / (static_cast<double>(w) * h);
    std::printf("%ux%u ink=%.4f colours=%zu\n", w, h, share, colours.size());
    return share >= min_ink && colours.size() >= min_colours ? 0 : 1;
}
