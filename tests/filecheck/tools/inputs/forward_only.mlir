%x = pd.data "x" : tensor<?x3xf32>
%w = pd.parameter "fc_0.w_0" : tensor<3x1xf32>
%b = pd.parameter "fc_0.b_0" : tensor<1xf32>
%h = pd.matmul %x, %w {name = "fc_0.tmp_0"} : (tensor<?x3xf32>, tensor<3x1xf32>) -> tensor<?x1xf32>
%y = pd.elementwise_add %h, %b {axis = 1 : i64, name = "fc_0.tmp_1"} : (tensor<?x1xf32>, tensor<1xf32>) -> tensor<?x1xf32>
%m = pd.mean %y {name = "mean_0.tmp_0"} : (tensor<?x1xf32>) -> tensor<f32>
