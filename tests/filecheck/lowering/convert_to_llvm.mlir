// RUN: pullback-opt %s -p convert-math-to-llvm,convert-arith-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts | filecheck %s

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

// CHECK:      llvm.func @f(%x: f32, %n: i64) -> f32
// CHECK:        llvm.fmul %x, %{{.*}} {fastmathFlags = #llvm.fastmath<contract>} : f32
// CHECK:        llvm.call_intrinsic "llvm.tanh.f32"
// CHECK:        llvm.call_intrinsic "llvm.maximum.f32"
// CHECK:        llvm.icmp "sgt"
// CHECK:        llvm.cond_br
// CHECK:        llvm.return
// CHECK:      llvm.func @_pullback_packed_f(%{{.*}}: !llvm.ptr)
// CHECK:        llvm.call @f(
