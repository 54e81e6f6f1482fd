%x = pd.data "x" : tensor<3xf32>
%a = pd.elementwise_add %x, %a {name = "a"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
pd.fetch %a : tensor<3xf32>
