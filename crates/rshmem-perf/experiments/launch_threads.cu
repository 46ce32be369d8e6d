// Experiment (not a test): how kernel launches from several host threads into one CUDA
// context scale (thread PEs share their GPU's primary context). T threads, each with its
// own non-blocking stream, launch N kernels of 9 parameters back to back; reported: host
// time per launch seen by each thread, the launches per second of all threads together, and
// the same with cooperative launches, with the driver's cuLaunchKernel, and with the
// driver calls rshmem's on-stream collectives make beside the launch (cuStreamIsCapturing,
// cuCtxGetCurrent). Plain CUDA: nvcc -O2 -arch=sm_90 launch_threads.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>
#include <atomic>
__global__ void k9(int a, long long b, long long c, long long d, int e, int f, int g, int h, long long i) {
    if (a == -12345 && threadIdx.x == 0) *(long long*)b = c + d + e + f + g + h + i;
}
static double now_us() { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main() {
    cudaSetDevice(0);
    cudaFree(0);
    const int N = 4000;
    CUfunction fk9;
    cudaGetFuncBySymbol(&fk9, (const void*)k9);
    const char* names[] = {"plain", "cooperative", "driver", "driver+capq", "driver+capq+ctx"};
    for (int coop = 0; coop < 5; coop++) {
        for (int T : {1, 2, 4, 8}) {
            std::vector<cudaStream_t> s(T);
            for (auto& x : s) cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking);
            std::vector<double> per(T), drain(T);
            std::atomic<int> ready{0};
            auto body = [&](int t) {
                cudaSetDevice(0);
                void* args[9];
                int a = 1, e = 2, f = 3, g = 4, h = 5; long long b = 0, c = 1, d = 2, i = 3;
                void* p[9] = {&a, &b, &c, &d, &e, &f, &g, &h, &i};
                for (int j = 0; j < 9; j++) args[j] = p[j];
                for (int w = 0; w < 100; w++) cudaLaunchKernel((void*)k9, dim3(1), dim3(512), args, 0, s[t]);
                cudaStreamSynchronize(s[t]);
                ready++;
                while (ready.load() < T) {}
                double t0 = now_us();
                for (int n = 0; n < N; n++) {
                    if (coop == 1) cudaLaunchCooperativeKernel((void*)k9, dim3(1), dim3(512), args, 0, s[t]);
                    else if (coop == 0) cudaLaunchKernel((void*)k9, dim3(1), dim3(512), args, 0, s[t]);
                    else {
                        if (coop >= 3) { CUstreamCaptureStatus st; cuStreamIsCapturing((CUstream)s[t], &st); }
                        if (coop >= 4) { CUcontext c; cuCtxGetCurrent(&c); }
                        cuLaunchKernel(fk9, 1, 1, 1, 512, 1, 1, 0, (CUstream)s[t], args, nullptr);
                    }
                }
                double t1 = now_us();
                cudaStreamSynchronize(s[t]);
                double t2 = now_us();
                per[t] = (t1 - t0) / N;
                drain[t] = (t2 - t0) / N;
            };
            std::vector<std::thread> th;
            for (int t = 0; t < T; t++) th.emplace_back(body, t);
            for (auto& x : th) x.join();
            double mx = 0, dmx = 0;
            for (int t = 0; t < T; t++) { mx = per[t] > mx ? per[t] : mx; dmx = drain[t] > dmx ? drain[t] : dmx; }
            printf("launch_threads %-12s threads %d: host us per launch per thread (slowest) %.2f, until its stream drained %.2f, all threads %.0f launches/s  err=%s\n",
                   names[coop], T, mx, dmx, T * N / (dmx * N) * 1e6, cudaGetErrorString(cudaGetLastError()));
            for (auto& x : s) cudaStreamDestroy(x);
        }
    }
    return 0;
}
