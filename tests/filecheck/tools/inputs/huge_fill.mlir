%a = pd.fill_constant {shape = array<i64: 1000000, 1000000, 1000>, value = 2.0 : f64, name = "a"} : tensor<1000000x1000000x1000xf32>
%s = pd.reduce_sum %a {name = "s"} : (tensor<1000000x1000000x1000xf32>) -> tensor<f32>
pd.fetch %s : tensor<f32>
