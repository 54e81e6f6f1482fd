%a = pd.fill_constant {shape = array<i64: 3>, value = 2.0 : f64, dtype = "float128", name = "a"} : tensor<3xf32>
%s = pd.reduce_sum %a {name = "s"} : (tensor<3xf32>) -> tensor<f32>
pd.fetch %s : tensor<f32>
