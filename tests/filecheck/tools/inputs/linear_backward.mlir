%x = pd.data "x" : tensor<?x3xf32>
%w = pd.parameter "fc_0.w_0" : tensor<3x1xf32>
%y = pd.matmul %x, %w {name = "fc_0.tmp_0"} : (tensor<?x3xf32>, tensor<3x1xf32>) -> tensor<?x1xf32>
%m = pd.mean %y {name = "mean_0.tmp_0"} : (tensor<?x1xf32>) -> tensor<f32>
%g = pd.backward targets(%m : tensor<f32>) wrt(%w : tensor<3x1xf32>) {
} -> (tensor<3x1xf32>)
