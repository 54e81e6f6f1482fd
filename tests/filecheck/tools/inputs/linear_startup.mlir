%w = pd.fill_constant {shape = array<i64: 3, 1>, value = 2.0 : f64, name = "fc_0.w_0"} : tensor<3x1xf32>
