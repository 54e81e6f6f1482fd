// RUN: pullback-opt %s -t llvm | filecheck %s

// The CPU emitter (lowering/llvm/) on scalar arith/math ops and `cf` branches
// between blocks: fast-math flags carry over, math ops become intrinsics, an
// entry gets its packed wrapper.

builtin.module {
  func.func @f(%x: f32, %n: index) -> f32 attributes {llvm.emit_c_interface} {
    %c = arith.constant 2.0 : f32
    %m = arith.mulf %x, %c fastmath<contract> : f32
    %t = math.tanh %m : f32
    %r = arith.maximumf %t, %x : f32
    %i = arith.index_cast %n : index to i64
    %z = arith.constant 0 : i64
    %p = arith.cmpi sgt, %i, %z : i64
    cf.cond_br %p, ^a, ^b
  ^a:
    func.return %r : f32
  ^b:
    func.return %x : f32
  }
}

// CHECK:      define float @"f"(float %{{.*}}, i64 %{{.*}})
// CHECK:        fmul contract float
// CHECK:        call float @"llvm.tanh.f32"
// CHECK:        call float @"llvm.maximum.f32"
// CHECK:        icmp sgt i64
// CHECK:        br i1 %{{.*}}, label %{{.*}}, label %{{.*}}
// CHECK:        ret float
// CHECK:      define void @"_pullback_packed_f"(ptr %{{.*}})
// CHECK:        call float @"f"(
