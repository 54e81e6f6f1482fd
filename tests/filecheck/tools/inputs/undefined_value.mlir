%x = pd.data "x" : tensor<?x3xf32>
%y = pd.relu %xx : (tensor<?x3xf32>) -> tensor<?x3xf32>
%z = pd.relu %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
%m = pd.mean %y {name = "mean_0.tmp_0"} : (tensor<?x3xf32>) -> tensor<f32>
