%a = pd.fill_constant {shape = array<i64: 4294967296, 4294967296>, value = 2.0 : f64, name = "a"} : tensor<4294967296x4294967296xf32>
%s = pd.reduce_sum %a {name = "s"} : (tensor<4294967296x4294967296xf32>) -> tensor<f32>
pd.fetch %s : tensor<f32>
