// RUN: pullback-opt %s -p convert-scf-while-to-cf | filecheck %s

// scf.while becomes a header block (the `before` region) branching into the body
// (the `after` region) or to the ops after the loop, which receive its results;
// the body branches back to the header.  Nested loops are lowered too.
builtin.module {
  func.func @count(%n: i64) -> i64 {
    %zero = arith.constant 0 : i64
    %one = arith.constant 1 : i64
    %r = scf.while (%i = %zero) : (i64) -> i64 {
      %c = arith.cmpi slt, %i, %n : i64
      scf.condition(%c) %i : i64
    } do {
    ^bb0(%j: i64):
      %k = arith.addi %j, %one : i64
      scf.yield %k : i64
    }
    %twice = arith.addi %r, %r : i64
    func.return %twice : i64
  }

  func.func @nested(%n: i64) -> i64 {
    %zero = arith.constant 0 : i64
    %one = arith.constant 1 : i64
    %r:2 = scf.while (%i = %zero, %acc = %zero) : (i64, i64) -> (i64, i64) {
      %c = arith.cmpi slt, %i, %n : i64
      scf.condition(%c) %i, %acc : i64, i64
    } do {
    ^bb0(%j: i64, %a: i64):
      %inner = scf.while (%m = %zero) : (i64) -> i64 {
        %d = arith.cmpi slt, %m, %j : i64
        scf.condition(%d) %m : i64
      } do {
      ^bb0(%m2: i64):
        %m3 = arith.addi %m2, %one : i64
        scf.yield %m3 : i64
      }
      %a2 = arith.addi %a, %inner : i64
      %j2 = arith.addi %j, %one : i64
      scf.yield %j2, %a2 : i64, i64
    }
    func.return %r#1 : i64
  }
}

// CHECK:      func.func @count(%n: i64) -> i64 {
// CHECK-NEXT:   %zero = arith.constant 0 : i64
// CHECK-NEXT:   %one = arith.constant 1 : i64
// CHECK-NEXT:   cf.br ^[[HEAD:bb[0-9]+]](%zero : i64)
// CHECK-NEXT: ^[[HEAD]](%i: i64):
// CHECK-NEXT:   %c = arith.cmpi slt, %i, %n : i64
// CHECK-NEXT:   cf.cond_br %c, ^[[BODY:bb[0-9]+]](%i : i64), ^[[EXIT:bb[0-9]+]](%i : i64)
// CHECK-NEXT: ^[[BODY]](%j: i64):
// CHECK-NEXT:   %k = arith.addi %j, %one : i64
// CHECK-NEXT:   cf.br ^[[HEAD]](%k : i64)
// CHECK-NEXT: ^[[EXIT]](%r: i64):
// CHECK-NEXT:   %twice = arith.addi %r, %r : i64
// CHECK-NEXT:   func.return %twice : i64

// CHECK:      func.func @nested(%n: i64) -> i64 {
// CHECK-NOT:    scf.while
// CHECK:        cf.br ^[[OUTER:bb[0-9]+]](%zero, %zero : i64, i64)
// CHECK-NEXT: ^[[OUTER]](%i: i64, %acc: i64):
// CHECK:        cf.cond_br %c, ^[[OBODY:bb[0-9]+]](%i, %acc : i64, i64), ^[[OEXIT:bb[0-9]+]](%i, %acc : i64, i64)
// CHECK-NEXT: ^[[OBODY]](%j: i64, %a: i64):
// CHECK-NEXT:   cf.br ^[[INNER:bb[0-9]+]](%zero : i64)
// CHECK-NEXT: ^[[INNER]](%m: i64):
// CHECK-NEXT:   %d = arith.cmpi slt, %m, %j : i64
// CHECK-NEXT:   cf.cond_br %d, ^[[IBODY:bb[0-9]+]](%m : i64), ^[[IEXIT:bb[0-9]+]](%m : i64)
// CHECK-NEXT: ^[[IBODY]](%m2: i64):
// CHECK:        cf.br ^[[INNER]](%m3 : i64)
// CHECK-NEXT: ^[[IEXIT]](%inner: i64):
// CHECK-NEXT:   %a2 = arith.addi %a, %inner : i64
// CHECK-NEXT:   %j2 = arith.addi %j, %one : i64
// CHECK-NEXT:   cf.br ^[[OUTER]](%j2, %a2 : i64, i64)
// CHECK-NEXT: ^[[OEXIT]](%{{.*}}: i64, %{{.*}}: i64):
// CHECK-NEXT:   func.return
